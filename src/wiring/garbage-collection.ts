/**
 * How V8 collects this process's garbage, set by the composition root before anything starts.
 * Process-wide. Heap growth follows the last Glidepath started in a process; pretenuring, once
 * one with the ingest role has turned it off, stays off.
 *
 * Heap growth: how far the heap may grow past what was live at the last full collection before
 * V8 collects again. V8's own factor is up to about 4x, and the pages a heap grew into stay in
 * the process's RSS: under bench:ingest's closed loop the ingest process (28 MB live at rest)
 * peaked at 227 MB RSS, the workers (54 MB live at rest) at 358 MB, almost all of it garbage no
 * older than a few full collections. Glidepath's garbage is short-lived (a request, a batch), so a
 * smaller factor costs a few more full collections, of tens of MB each.
 *
 * Pretenuring, off where the ingest role runs: V8 watches how many objects of each allocation
 * site survive a young collection, and once most do, allocates that site's objects in the old
 * generation from then on. A burst of requests in flight (64 at once in bench:ingest's closed
 * loop) is enough for the sites that build a parsed fact (zod's object parsers) to be judged
 * long-lived, though each lives for one request. Every fact then went straight to the old
 * generation: a full collection every 0.65 s at 1,000 facts/s, and young collections slowed by
 * the old objects pointing at young ones. V8's sampling heap profiler showed what outlived a young
 * collection fall from 48-67 MB to 17-18 MB per 3,000 facts; bench/README.md has what it did to
 * ingest's CPU per fact, its GC pauses and the p99. A process of the worker role alone keeps
 * V8's own (its records and batches do outlive a young collection: the same CPU per fact either
 * way, ~10 MB more RSS without); a process of every role (the default) turns it off for both.
 *
 * The young generation is not set here: V8 sizes it when the isolate is made, and a flag set at
 * run time changes nothing. `npm start` and the image's CMD give `--max-semi-space-size=8` (16 MB
 * of young generation instead of V8's 32): under bench:ingest's closed loop the workers peaked
 * at 191-196 MB RSS with it and 206-213 MB without, ingest at 127-128 against 145-147, for ~60
 * more scavenges of a few ms in the 5 s at 1,000 facts/s (6 Dec 2026). The command line wins
 * over NODE_OPTIONS: another size is given by the container's command (args in the Deployment).
 *
 * The collector's helpers are not set here either: node makes V8's thread pool before any code
 * runs, four threads by default, and a young collection hands its work to all of them at once.
 * A process of one JavaScript thread then took more than a core in bursts, on a 2-core machine
 * taking the core the other role's answer was waiting for, and under a one-core CPU limit (the
 * Deployments') spending its quota early in the period and waiting out the rest. `npm start` and
 * the image's CMD give `--v8-pool-size=1`: one helper, so a process takes two cores at most.
 * bench:ingest, alternating runs (6 Dec 2026): accept p99 at 1,000 facts/s 7.8-25 ms (median
 * 11.7, five runs) against 11-119 ms (median 41, seven runs); workers' peak RSS 180-184 MB against
 * 190-197 (three fewer threads, their stacks and malloc arenas); the closed loop's ratio alike.
 */
import { setFlagsFromString } from 'node:v8';

export interface GarbageCollection {
  /** HEAP_GROWTH_PERCENT: 0 leaves V8's own heuristics. */
  heapGrowthPercent: number;
  /** Whether this process answers webhooks and watches clusters (the ingest role). */
  ingest: boolean;
}

/**
 * Whether node's command line chose the V8 flag itself (`--flag`, `--no-flag` or `--noflag`,
 * dashes or underscores, with or without a value): that choice stands. Only the command line:
 * NODE_OPTIONS refuses these flags.
 */
export function chosenOnCommandLine(flag: string, argv: readonly string[]): boolean {
  return argv.some((arg) => {
    const name = arg.replace(/_/g, '-').split('=')[0] ?? '';
    return name === `--${flag}` || name === `--no-${flag}` || name === `--no${flag}`;
  });
}

export function tuneGarbageCollection({ heapGrowthPercent, ingest }: GarbageCollection, argv: readonly string[] = process.execArgv): void {
  if (heapGrowthPercent > 0 && !chosenOnCommandLine('heap-growing-percent', argv)) setFlagsFromString(`--heap-growing-percent=${heapGrowthPercent}`);
  if (ingest && !chosenOnCommandLine('allocation-site-pretenuring', argv)) setFlagsFromString('--no-allocation-site-pretenuring');
}
