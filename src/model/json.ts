/**
 * Readers that check a value's type before use. The judgements run on objects a cluster sent,
 * including fields no schema types (unknown fields pass through), and must never throw on an
 * odd one; these say "absent" instead.
 */

export type JsonRecord = Record<string, unknown>;

export function record(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Parses like Go's strconv.Atoi: optional sign and decimal digits, nothing else. */
export function atoi(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return Number(value);
  return undefined;
}
