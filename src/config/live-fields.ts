/**
 * What a reload may change while Glidepath runs, and what needs a restart. A reloaded file that
 * changes a field of the second kind is refused as a whole, with one line per field ("needs a
 * restart"), so the running config is always exactly one file's and its hash says which.
 *
 * Live: pipelines, pipelineTemplates, freezes, a cluster's `facts` (its watch starts or stops), and the
 * settings read where they are used. Restart: what start-up builds once from the file (cluster
 * clients and their connections, the identity map, TTLs and lease lengths given to stores, the
 * watch streams' bounds, the audit stream's limits). The environment (REDIS_URL, PORT, Slack
 * tokens, …) is not in the file at all: it changes with a new pod, never by a reload.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ConfigFile } from './file.js';

type Settings = ConfigFile['settings'];

/** Settings start-up hands to a part once (a store's TTL, a lease's length, a stream's bound). */
const RESTART_SETTINGS: readonly (keyof Settings)[] = [
  'finishedReleaseTtlHours',
  'unfinishedReleaseTtlDays',
  'forgetTargetAfterMinutes',
  'watchLeaseSeconds',
  'watchResyncMinutes',
  'watchMaxLineMiB',
  'watchMaxStreamMiB',
  'freshnessRefresh',
  'auditMaxEntries',
  'auditDeniedPerUserPerMinute',
];

/** A config as data: compiled selectors by their text. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (_k, v: unknown) => (v !== null && typeof v === 'object' && 'matches' in v && 'text' in v ? (v as { text: string }).text : v)));
}

/** One line per field the new file changes that cannot change live, by the new file's path (the old one's for a cluster gone). */
export function restartNeeded(running: ConfigFile, next: ConfigFile): string[] {
  const out: string[] = [];
  for (const key of RESTART_SETTINGS) {
    if (!isDeepStrictEqual(plain(running.settings[key]), plain(next.settings[key]))) out.push(`settings.${key}: needs a restart (read once at start-up); the running value stays until then`);
  }
  const runningClusters = new Map(running.clusters.map((c) => [c.name, c]));
  next.clusters.forEach((c, i) => {
    const before = runningClusters.get(c.name);
    if (!before) return void out.push(`clusters[${i}]: cluster "${c.name}" is new: adding a cluster needs a restart (its client is built at start-up)`);
    for (const field of new Set([...Object.keys(before), ...Object.keys(c)]) as Set<keyof typeof c>) {
      if (field === 'facts') continue;
      if (!isDeepStrictEqual(plain(before[field]), plain(c[field]))) out.push(`clusters[${i}].${field}: needs a restart (the cluster's client is built at start-up)`);
    }
  });
  const nextNames = new Set(next.clusters.map((c) => c.name));
  running.clusters.forEach((c, i) => {
    if (!nextNames.has(c.name)) out.push(`clusters[${i}]: cluster "${c.name}" is gone: removing a cluster needs a restart`);
  });
  if (!isDeepStrictEqual(plain(running.identities), plain(next.identities))) out.push('identities: needs a restart (the identity map is built at start-up)');
  return out;
}
