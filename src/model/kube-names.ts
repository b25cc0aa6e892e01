/**
 * What the Kubernetes API server accepts as names, namespaces, labels and versions
 * (k8s.io/apimachinery/pkg/util/validation). A fact holding anything else did not come from a
 * cluster: `/` or control characters in a name would make target keys ambiguous, and a
 * generation of 0 or one past 2^53 would break the ordering of observations.
 */
import { z } from 'zod';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified name (label keys) and a non-empty label value. */
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Namespaces: a DNS-1123 label (63 characters at most). */
export function isDns1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

/** Object names: a DNS-1123 subdomain (253 characters at most). */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** A label key: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (slash !== -1 && !isDns1123Subdomain(key.slice(0, slash))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

/** A label value: empty, or at most 63 characters of letters, digits, `-`, `_`, `.`, alphanumeric at both ends. */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && QUALIFIED_NAME.test(value));
}

/** The first label that Kubernetes would refuse, as a message, or undefined. */
export function labelProblem(labels: Readonly<Record<string, string>>): string | undefined {
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelKey(key)) return `label key ${JSON.stringify(key.slice(0, 80))} is not a Kubernetes label key ([prefix/]name, name up to 63 of A-Z a-z 0-9 - _ .)`;
    if (!isLabelValue(value)) return `label ${JSON.stringify(key)} has a value Kubernetes would refuse (up to 63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends)`;
  }
  return undefined;
}

export const NAMESPACE_MESSAGE = 'must be a Kubernetes namespace (a DNS-1123 label: lowercase letters, digits and -, up to 63)';
export const NAME_MESSAGE = 'must be a Kubernetes object name (a DNS-1123 subdomain: lowercase letters, digits, - and ., up to 253)';

/**
 * metadata.generation: a positive integer that a JavaScript number holds exactly. Templates
 * may render it as a string; a string is checked before it becomes a number, so
 * "9007199254740993" is refused instead of silently rounded.
 */
export const generation = z.union([z.number(), z.string().max(32)]).transform((value, ctx) => {
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0 || (typeof value === 'string' && String(n) !== value.replace(/^0+(?=\d)/, ''))) {
    ctx.addIssue({ code: 'custom', message: 'must be a positive integer up to 2^53 - 1 (metadata.generation)' });
    return z.NEVER;
  }
  return n;
});
