/**
 * What the API server checks and fills in object metadata on every write: RFC 1123 names and
 * namespaces, label keys and values, the annotation size limit, and generateName suffixes.
 */
import type { StatusCause } from './errors.js';
import { isLabelKey, isLabelValue } from './label-selector.js';
import type { ObjectMeta } from './object.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const RANDOM_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += RANDOM_ALPHABET[Math.floor(Math.random() * RANDOM_ALPHABET.length)];
  return out;
}

/** Adds a cause for every metadata field a real API server would refuse. */
export function checkMetadata(meta: ObjectMeta, causes: StatusCause[]): void {
  if (meta.name && (meta.name.length > 253 || !DNS_SUBDOMAIN.test(meta.name))) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(meta.name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    });
  }
  if (meta.namespace && !DNS_LABEL.test(meta.namespace)) {
    causes.push({ reason: 'FieldValueInvalid', field: 'metadata.namespace', message: `Invalid value: ${JSON.stringify(meta.namespace)}: a lowercase RFC 1123 label` });
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    if (!isLabelKey(key)) causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: ${JSON.stringify(key)}: not a valid label key` });
    if (typeof value !== 'string' || !isLabelValue(value)) {
      causes.push({ reason: 'FieldValueInvalid', field: `metadata.labels`, message: `Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'` });
    }
  }
  let size = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    if (typeof value !== 'string') {
      causes.push({ reason: 'FieldValueTypeInvalid', field: `metadata.annotations.${key}`, message: 'Invalid value: annotation values must be strings' });
    } else size += key.length + value.length;
  }
  if (size > ANNOTATIONS_MAX_BYTES) {
    causes.push({ reason: 'FieldValueTooLong', field: 'metadata.annotations', message: `Too long: must have at most ${ANNOTATIONS_MAX_BYTES} bytes` });
  }
}
