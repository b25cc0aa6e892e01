/** Ordering of observations of one object: generation first, then resourceVersion. */
import type { TargetState } from './record.js';

function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined || a === b) return 0;
  // resourceVersion is opaque to clients, but every real API server (etcd revisions) and our
  // stand-in issue increasing integers; only then do we order by it.
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return 0;
}

/** < 0 when `next` is older than `prev`, 0 when it is the same observation, > 0 when newer. */
export function compareObservations(
  next: { generation?: number; resourceVersion?: string },
  prev: { generation?: number; resourceVersion?: string },
): number {
  if (next.generation !== undefined && prev.generation !== undefined && next.generation !== prev.generation) {
    return next.generation - prev.generation;
  }
  if (next.resourceVersion === undefined || prev.resourceVersion === undefined) return 1;
  if (next.resourceVersion === prev.resourceVersion) return 0;
  const byVersion = compareResourceVersions(next.resourceVersion, prev.resourceVersion);
  return byVersion === 0 ? 1 : byVersion;
}

/** Operations are ordered by start time; the same operation by its progress to a final phase. */
export function compareSync(next: TargetState['sync'], prev: NonNullable<TargetState['sync']>): number {
  if (!next) return -1;
  const byStart = Date.parse(next.startedAt ?? '') - Date.parse(prev.startedAt ?? '');
  if (!Number.isNaN(byStart) && byStart !== 0) return byStart;
  if (next.phase !== prev.phase) return next.phase === 'Running' ? -1 : 1;
  return (next.retryCount ?? 0) - (prev.retryCount ?? 0) || (next.finishedAt ?? '').localeCompare(prev.finishedAt ?? '');
}
