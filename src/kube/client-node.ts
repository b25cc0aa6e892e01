/**
 * @kubernetes/client-node, loaded at its first use instead of at start-up. Loading it holds about
 * 37 MB of heap (its sources and code), and V8 lets the heap grow to a few times what is live
 * before a full collection: in an ingest process that never talks to a cluster (webhook facts,
 * no Slack commands) it tripled the peak under load (bench:ingest). A process that does use a
 * cluster loads it at the first cluster client it builds. The module is ESM without top-level
 * await, so Node (>= 20.19) loads it synchronously through require.
 */
import { createRequire } from 'node:module';
import type * as ClientNodeModule from '@kubernetes/client-node';

type ClientNode = typeof ClientNodeModule;

let loaded: ClientNode | undefined;

export function clientNode(): ClientNode {
  return (loaded ??= createRequire(import.meta.url)('@kubernetes/client-node') as ClientNode);
}
