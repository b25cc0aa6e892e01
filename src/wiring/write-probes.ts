/** What /readyz writes to (src/http/ops.ts): a probe key in the slot of each queue this process writes. */
import type { Role } from '../config/env.js';
import type { Keys } from '../store/keys.js';

/** Ingest writes any partition's facts queue, a worker its own partitions', the watchdog's and (with Slack) the outbox; a writer the outbox. */
export function writeProbesOf(roles: ReadonlySet<Role>, keys: Keys, heldPartitions: readonly number[], postsToSlack: boolean): string[] {
  const prefixes = new Set<string>();
  if (roles.has('ingest')) for (let p = 0; p < keys.partitions; p++) prefixes.add(keys.factQueuePrefix(p));
  if (roles.has('worker')) {
    for (const p of heldPartitions) prefixes.add(keys.factQueuePrefix(p));
    prefixes.add(keys.queuePrefix('watchdog'));
  }
  if ((roles.has('worker') && postsToSlack) || roles.has('writer')) prefixes.add(keys.queuePrefix('slack'));
  return [...prefixes].map((prefix) => keys.writeProbe(prefix));
}
