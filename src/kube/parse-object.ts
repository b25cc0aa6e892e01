/**
 * Parsing what a cluster returns with the object schemas of src/model/: a shape Glidepath cannot
 * trust is a typed error for a single object, and left out (and counted) in a list.
 */
import type { z } from 'zod';
import { KubeActionError, type KubeCall } from './errors.js';

/** Parses one object read from a cluster; a shape Glidepath cannot trust is a typed error. */
export function parseObject<T extends z.ZodType>(schema: T, value: unknown, call: KubeCall): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue ? issue.path.join('.') : '';
  throw new KubeActionError('malformed', `${call.name ?? call.resource} in ${call.cluster}${call.namespace ? `/${call.namespace}` : ''} has a shape Glidepath does not understand (${path || 'object'}: ${issue?.message ?? 'invalid'}); nothing was changed`, call);
}

/** Parses the items of a list; items that do not parse are returned apart, never silently used. */
export function parseItems<T extends z.ZodType>(schema: T, items: unknown[]): { items: z.infer<T>[]; rejected: number } {
  const parsed: z.infer<T>[] = [];
  let rejected = 0;
  for (const item of items) {
    const r = schema.safeParse(item);
    if (r.success) parsed.push(r.data);
    else rejected++;
  }
  return { items: parsed, rejected };
}
