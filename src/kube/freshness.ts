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
  return apps.filter((app) =>
    (app.metadata.ownerReferences ?? []).some(
      (o) => o.controller === true && o.kind === 'ApplicationSet' && o.name === appSet.metadata.name && (!uid || !o.uid || o.uid === uid),
    ),
  );
}

/** `status.sync.revisions` for multi-source apps, else `[status.sync.revision]`. */
export function revisionsOf(app: Application): string[] {
  const sync = app.status?.sync;
  if (sync?.revisions && sync.revisions.length > 0) return sync.revisions;
  return sync?.revision ? [sync.revision] : [];
}

export function latestTransition(entries: readonly ApplicationStatusEntry[]): string | undefined {
  let latest: { at: number; text: string } | undefined;
  for (const e of entries) {
    const at = Date.parse(e.lastTransitionTime ?? '');
    if (!Number.isNaN(at) && (!latest || at > latest.at)) latest = { at, text: e.lastTransitionTime! };
  }
  return latest?.text;
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

export function judgeChild(app: Application, entry: ApplicationStatusEntry | undefined, latest: string | undefined, hasEntries: boolean, now: number): ChildFreshness {
  const name = app.metadata.name;
  const annotations = app.metadata.annotations ?? {};
  if (annotations[REFRESH_ANNOTATION] !== undefined) {
    const requested = Date.parse(annotations[REFRESH_TIMESTAMP_ANNOTATION] ?? '');
    return { name, fresh: false, reason: Number.isNaN(requested) ? 'refresh pending' : `refresh pending for ${humanDuration(now - requested)}` };
  }
  const reconciledAt = app.status?.reconciledAt;
  if (latest !== undefined) {
    const at = Date.parse(reconciledAt ?? '');
    if (Number.isNaN(at)) return { name, fresh: false, reason: 'never reconciled' };
    const gap = Date.parse(latest) - at;
    if (gap > 0) return { name, fresh: false, reason: `reconciledAt ${humanDuration(gap)} before the latest transition` };
  }
  if (hasEntries) {
    if (!entry) return { name, fresh: false, reason: "not yet in the ApplicationSet's status" };
    const target = entry.targetRevisions ?? [];
    const actual = revisionsOf(app);
    if (actual.length !== target.length || actual.some((r, i) => r !== target[i])) {
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
  const latest = latestTransition(entries);
  const judged = children.map((app) => judgeChild(app, byName.get(app.metadata.name), latest, entries.length > 0, now)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const stale = judged.filter((c) => !c.fresh);
  return { appSet: appSet.metadata.name, ...(latest ? { latestTransition: latest } : {}), children: judged, stale, freshCount: judged.length - stale.length };
}

/** "31/40 fresh" */
export function progressText(report: Pick<FreshnessReport, 'freshCount' | 'children'>): string {
  return `${report.freshCount}/${report.children.length} fresh`;
}
