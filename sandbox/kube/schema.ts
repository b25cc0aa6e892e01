/**
 * A structural-schema validator for CRD `openAPIV3Schema`, compiled once per CRD version and
 * lazily per property (the ApplicationSet schema is 1.4 MB, most of which a write never touches).
 * Like the real API server it prunes unknown fields, drops nulls of non-nullable fields, applies
 * defaults, and reports violations with the field path. CEL rules (x-kubernetes-validations) are
 * not evaluated.
 */
import type { StatusCause } from './errors.js';

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** Cause reason of a pruned unknown field: not a violation unless the client asked for strict validation. */
export const UNKNOWN_FIELD = 'FieldValueUnknown';

/** Returns the value to store (pruned, defaulted) and appends violations (and pruned fields) to `causes`. */
export type CompiledNode = (value: unknown, path: string, causes: StatusCause[]) => unknown;

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? '[]' : '{}';
  return String(value);
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, value: unknown): boolean {
  const actual = typeOf(value);
  if (expected === 'number') return actual === 'number' || actual === 'integer';
  return actual === expected;
}

function child(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const acceptAnything: CompiledNode = (value) => value;

export function compileSchema(schema: JsonSchema | undefined): CompiledNode {
  if (!schema) return acceptAnything;
  const preserveUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const pattern = schema.pattern !== undefined ? new RegExp(schema.pattern, 'u') : undefined;
  const props = schema.properties;
  const compiledProps = new Map<string, CompiledNode>();
  const propNode = (key: string): CompiledNode | undefined => {
    if (!props || !Object.prototype.hasOwnProperty.call(props, key)) return undefined;
    let node = compiledProps.get(key);
    if (!node) {
      node = compileSchema(props[key]);
      compiledProps.set(key, node);
    }
    return node;
  };
  let additional: CompiledNode | undefined;
  const additionalNode = (): CompiledNode | undefined => {
    if (typeof schema.additionalProperties === 'object') additional ??= compileSchema(schema.additionalProperties);
    return additional;
  };
  let items: CompiledNode | undefined;
  const itemNode = (): CompiledNode => (items ??= compileSchema(schema.items));

  return (value, path, causes) => {
    if (value === null && schema.nullable) return null;
    if (intOrString) {
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value))) {
        causes.push({
          reason: 'FieldValueTypeInvalid',
          field: path,
          message: `Invalid value: ${describe(value)}: ${path} in body must be of type integer-or-string: ${JSON.stringify(typeOf(value))}`,
        });
      }
      return value;
    }
    if (schema.type && !typeMatches(schema.type, value)) {
      causes.push({
        reason: 'FieldValueTypeInvalid',
        field: path,
        message: `Invalid value: ${JSON.stringify(typeOf(value))}: ${path} in body must be of type ${schema.type}: ${JSON.stringify(typeOf(value))}`,
      });
      return value;
    }
    if (schema.enum && !schema.enum.some((e) => e === value)) {
      causes.push({
        reason: 'FieldValueNotSupported',
        field: path,
        message: `Unsupported value: ${describe(value)}: supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      });
    }
    if (typeof value === 'string') {
      if (pattern && !pattern.test(value)) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: path,
          message: `Invalid value: ${describe(value)}: ${path} in body should match '${schema.pattern}'`,
        });
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        causes.push({ reason: 'FieldValueTooLong', field: path, message: `Too long: may not be more than ${schema.maxLength} bytes` });
      }
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: path,
          message: `Invalid value: ${describe(value)}: ${path} in body should be at least ${schema.minLength} chars long`,
        });
      }
      return value;
    }
    if (typeof value === 'number') {
      if (schema.minimum !== undefined && value < schema.minimum) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: path,
          message: `Invalid value: ${value}: ${path} in body should be greater than or equal to ${schema.minimum}`,
        });
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: path,
          message: `Invalid value: ${value}: ${path} in body should be less than or equal to ${schema.maximum}`,
        });
      }
      return value;
    }
    if (Array.isArray(value)) {
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: path,
          message: `Invalid value: ${value.length}: ${path} in body should have at least ${schema.minItems} items`,
        });
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        causes.push({ reason: 'FieldValueTooMany', field: path, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
      }
      if (!schema.items) return value;
      const node = itemNode();
      return value.map((item, i) => node(item, `${path}[${i}]`, causes));
    }
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const node = propNode(key);
        const extra = node ? undefined : additionalNode();
        const keep = node ?? extra ?? (preserveUnknown || schema.additionalProperties === true ? acceptAnything : undefined);
        if (!keep) {
          // Pruned, as the API server does; reported so fieldValidation=Strict/Warn can act on it.
          causes.push({ reason: UNKNOWN_FIELD, field: child(path, key), message: 'unknown field' });
          continue;
        }
        if (v === null && node && !props?.[key]?.nullable) continue; // null of a non-nullable field is dropped
        out[key] = keep(v, child(path, key), causes);
      }
      if (props) {
        for (const [key, sub] of Object.entries(props)) {
          if (out[key] === undefined && sub.default !== undefined) out[key] = structuredClone(sub.default);
        }
      }
      for (const key of schema.required ?? []) {
        if (out[key] === undefined) causes.push({ reason: 'FieldValueRequired', field: child(path, key), message: 'Required value' });
      }
      return out;
    }
    return value;
  };
}
