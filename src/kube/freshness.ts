/**
 * Freshness of an ApplicationSet's children (docs/freshness.md): the ApplicationSet
 * controller decides RollingSync steps from a possibly stale cache, so Glidepath decides only on
 * children that have provably been reconciled since the latest step transition. Pure: the reader
 * (freshness-reader.ts) supplies the objects and the time.
 */
import type { ApplicationCore as Application } from '../model/application.js';
import type { ApplicationSet, ApplicationStatusEntry } from '../model/application-set.js';

export const REFRESH_ANNOTATION = 'argocd.argoproj.io/refresh';
/** Set next to the refresh annotation by Argo CD 3.6+ (`argo.RefreshApp`). */
export const REFRESH_TIMESTAMP_ANNOTATION = 'argocd.argoproj.io/refresh-timestamp';

export interface ChildFreshness {
  name: string;
  fresh: boolean;
  /** Why a stale child is stale, in a person's words. */
  reason?: string;
}

export interface FreshnessReport {
  appSet: string;
  /** Latest lastTransitionTime among the ApplicationSet's applicationStatus entries. */
  latestTransition?: string;
  children: ChildFreshness[];
  stale: ChildFreshness[];
  freshCount: number;
}

/** The Applications whose controller ownerReference is this ApplicationSet (not a label: labels are user data). */
export function childrenOf(appSet: ApplicationSet, apps: readonly Application[]): Application[] {
  const uid = appSet.metadata.uid;
  const name = appSet.metadata.name;
  const owned = (o: NonNullable<Application['metadata']['ownerReferences']>[number]): boolean => o.controller === true && o.kind === 'ApplicationSet' && o.name === name && (!uid || !o.uid || o.uid === uid);
  return apps.filter((app) => app.metadata.ownerReferences?.some(owned) === true);
}

/** `status.sync.revisions` for multi-source apps, else `[status.sync.revision]`. */
export function revisionsOf(app: Application): string[] {
  const sync = app.status?.sync;
  if (sync?.revisions && sync.revisions.length > 0) return sync.revisions;
  return sync?.revision ? [sync.revision] : [];
}

export function latestTransition(entries: readonly ApplicationStatusEntry[]): string | undefined {
  return latestTransitionOf(entries)?.text;
}

/** The latest lastTransitionTime, as written and as a time (parsed once, not once per child). */
function latestTransitionOf(entries: readonly ApplicationStatusEntry[]): { at: number; text: string } | undefined {
  let latest: { at: number; text: string } | undefined;
  for (const e of entries) {
    const at = Date.parse(e.lastTransitionTime ?? '');
    if (!Number.isNaN(at) && (!latest || at > latest.at)) latest = { at, text: e.lastTransitionTime! };
  }
  return latest;
}

/** Whether the synced revision(s) are the target ones, in order (revisionsOf, without building its list). */
function syncedTo(app: Application, target: readonly string[]): boolean {
  const sync = app.status?.sync;
  if (sync?.revisions && sync.revisions.length > 0) return sync.revisions.length === target.length && sync.revisions.every((r, i) => r === target[i]);
  return sync?.revision ? target.length === 1 && target[0] === sync.revision : target.length === 0;
}

/** A git SHA as people read it (7 characters); anything else as it is. */
export const short = (sha: string): string => (/^[0-9a-f]{40}$/i.test(sha) ? sha.slice(0, 7) : sha);

/** "40 s", "2m", "1h5m". */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
}

/** `latestAt`: `latest` as a time, when the caller has parsed it already (judgeChildren, for every child). */
export function judgeChild(
  app: Application,
  entry: ApplicationStatusEntry | undefined,
  latest: string | undefined,
  hasEntries: boolean,
  now: number,
  latestAt: number | undefined = latest === undefined ? undefined : Date.parse(latest),
): ChildFreshness {
  const name = app.metadata.name;
  const annotations = app.metadata.annotations ?? {};
  if (annotations[REFRESH_ANNOTATION] !== undefined) {
    const requested = Date.parse(annotations[REFRESH_TIMESTAMP_ANNOTATION] ?? '');
    return { name, fresh: false, reason: Number.isNaN(requested) ? 'refresh pending' : `refresh pending for ${humanDuration(now - requested)}` };
  }
  const reconciledAt = app.status?.reconciledAt;
  if (latestAt !== undefined) {
    const at = Date.parse(reconciledAt ?? '');
    if (Number.isNaN(at)) return { name, fresh: false, reason: 'never reconciled' };
    const gap = latestAt - at;
    if (gap > 0) return { name, fresh: false, reason: `reconciledAt ${humanDuration(gap)} before the latest transition` };
  }
  if (hasEntries) {
    if (!entry) return { name, fresh: false, reason: "not yet in the ApplicationSet's status" };
    const target = entry.targetRevisions ?? [];
    if (!syncedTo(app, target)) {
      const actual = revisionsOf(app);
      return { name, fresh: false, reason: `revision ${actual.map(short).join(',') || 'none'} ≠ target ${target.map(short).join(',') || 'none'}` };
    }
  }
  return { name, fresh: true };
}

/** Judges every child; `apps` may hold other Applications too (only the children count). */
export function judgeFreshness(appSet: ApplicationSet, apps: readonly Application[], now: number): FreshnessReport {
  return judgeChildren(appSet, childrenOf(appSet, apps), now);
}

/** Judges `children`, already known to be the ApplicationSet's children. */
export function judgeChildren(appSet: ApplicationSet, children: readonly Application[], now: number): FreshnessReport {
  const entries = appSet.status?.applicationStatus ?? [];
  const byName = new Map(entries.map((e) => [e.application, e]));
  const latest = latestTransitionOf(entries);
  const judged = children.map((app) => judgeChild(app, byName.get(app.metadata.name), latest?.text, entries.length > 0, now, latest?.at));
  // A LIST comes in name order (within one namespace), so the sort is mostly a check.
  if (!inNameOrder(judged)) judged.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const stale = judged.filter((c) => !c.fresh);
  return { appSet: appSet.metadata.name, ...(latest ? { latestTransition: latest.text } : {}), children: judged, stale, freshCount: judged.length - stale.length };
}

function inNameOrder(judged: readonly ChildFreshness[]): boolean {
  for (let i = 1; i < judged.length; i++) if (judged[i - 1]!.name > judged[i]!.name) return false;
  return true;
}

/** "31/40 fresh" */
export function progressText(report: Pick<FreshnessReport, 'freshCount' | 'children'>): string {
  return `${report.freshCount}/${report.children.length} fresh`;
}
