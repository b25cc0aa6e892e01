/**
 * How V8 collects this process's garbage, set by the composition root before anything starts.
 * Process-wide: the last Glidepath started in a process sets them.
 *
 * Heap growth: how far the heap may grow past what was live at the last full collection before
 * V8 collects again. V8's own factor is up to about 4x, and the pages a heap grew into stay in
 * the process's RSS: under bench:ingest's closed loop the ingest process (28 MB live at rest)
 * peaked at 227 MB RSS, the workers (54 MB live at rest) at 358 MB, almost all of it garbage no
 * older than a few full collections. Glidepath's garbage is short-lived (a request, a batch), so a
 * smaller factor costs a few more full collections, of tens of MB each.
 *
 * Pretenuring, off where ingest runs: V8 watches how many objects of each allocation site
 * survive a young collection, and once most do, allocates that site's objects in the old
 * generation from then on. A burst of requests in flight (64 at once in bench:ingest's closed
 * loop) is enough for the sites that build a parsed fact (zod's object parsers) to be judged
 * long-lived, though each lives for one request. Every fact then went straight to the old
 * generation: 15 MB/s of garbage at 1,000 facts/s, a full collection every 0.65 s, and young
 * collections of 5-6 ms each, slowed by the old objects pointing at young ones. Measured with
 * V8's sampling heap profiler, what outlived a young collection fell from 48-67 MB to 17-18 MB per
 * 3,000 facts; in bench:ingest, ingest's CPU per fact from 283-302 µs to 193-209 µs and its GC
 * pauses from 225-270 to 78-99 ms per 5 s at 1,000 facts/s. The workers keep V8's own: their
 * records and batches do outlive a young collection (same CPU per fact either way, 10 MB more RSS
 * without it).
 */
import { setFlagsFromString } from 'node:v8';

export interface GarbageCollection {
  /** HEAP_GROWTH_PERCENT: 0 leaves V8's own heuristics. */
  heapGrowthPercent: number;
  /** Whether this process answers webhooks and watches clusters (the ingest role). */
  ingest: boolean;
}

/** Whether the node command line chose the V8 flag itself (`--flag`, `--no-flag`, dashes or underscores): that choice stands. */
export function chosenOnCommandLine(flag: string, argv: readonly string[]): boolean {
  return argv.some((arg) => arg.replace(/_/g, '-').replace(/^--no-/, '--').split('=')[0] === `--${flag}`);
}

export function tuneGarbageCollection({ heapGrowthPercent, ingest }: GarbageCollection, argv: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]): void {
  if (heapGrowthPercent > 0 && !chosenOnCommandLine('heap-growing-percent', argv)) setFlagsFromString(`--heap-growing-percent=${heapGrowthPercent}`);
  if (ingest && !chosenOnCommandLine('allocation-site-pretenuring', argv)) setFlagsFromString('--no-allocation-site-pretenuring');
}
