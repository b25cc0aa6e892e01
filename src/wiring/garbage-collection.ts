/**
 * How far a process's heap may grow past what was live at the last full collection before V8
 * collects again. V8's own factor is up to about 4x, and the pages a heap grew into stay in the
 * process's RSS: under bench:ingest's closed loop the ingest process (28 MB live at rest) peaked
 * at 227 MB RSS, the workers (54 MB live at rest) at 358 MB, almost all of it garbage no older
 * than a few full collections. Glidepath's garbage is short-lived (a request, a batch), so a
 * smaller factor costs a few more full collections, of tens of MB each.
 */
import { setFlagsFromString } from 'node:v8';

/** HEAP_GROWTH_PERCENT: 0 leaves V8's own heuristics. Process-wide: the last Glidepath started in a process sets it. */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
