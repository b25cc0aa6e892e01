/**
 * A pure model of one ApplicationSet's RollingSync for reducer tests: the objects the watch source
 * would see (child Applications and the ApplicationSet, each with increasing resourceVersions),
 * as a timeline of observations. `staleCache` names a child whose ApplicationSet entry goes
 * Healthy from a stale cache while the Application is never synced (argo-cd#22558); later steps
 * then run anyway, and Argo CD's periodic refresh compares the child again (a new
 * `status.reconciledAt`), still OutOfSync. The objects carry the controllers' clock as the real
 * ones do: an entry's `lastTransitionTime` moves when its status does, an Application's
 * `reconciledAt` at each full comparison (a refresh, the end of a sync), not on a health change.
 * The observations become facts through the product's own schemas and normaliser.
 */
import type { ConfigFile } from '../../src/config/file.js';
import type { ReleaseRecord } from '../../src/releases/record/record.js';
import { testConfig } from './pipeline.js';
import type { ApplicationFact, ApplicationSetFact } from '../../src/facts/fact.js';
import { normaliseApplication, normaliseApplicationSet } from '../../src/facts/normalise.js';
import { applicationFactBody, applicationSetFactBody } from '../../src/facts/schemas.js';

export const APPSET = 'checkout';
export const NS = 'argocd';

export interface ChildState {
  sync: 'Synced' | 'OutOfSync';
  health: 'Healthy' | 'Progressing' | 'Degraded';
  revision: string;
  op?: { phase: 'Running' | 'Succeeded'; revision?: string; startedAt: string };
  reconciledAt?: string;
  /** The release id annotation the child carries (CI writes it into the template), if any. */
  releaseId?: string;
}

export interface MemberState {
  status: 'Waiting' | 'Pending' | 'Progressing' | 'Healthy';
  targetRevisions: string[];
  lastTransitionTime?: string;
}

/** A revision of its own per child of APPSET_STEPS (a source per child, one change pushed to all). */
export const OWN_REVISIONS: Record<string, string> = {
  'checkout-staging': 'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1',
  'checkout-eu-1': 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2',
  'checkout-eu-2': 'c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3',
  'checkout-us': 'd4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4',
};

export type Observation =
  | { kind: 'app'; name: string; rv: number; state: ChildState }
  | { kind: 'appset'; rv: number; members: Record<string, MemberState & { step: number }> };

export function applicationObject(name: string, rv: number, s: ChildState, labels: Record<string, string> = {}): unknown {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      namespace: NS,
      name,
      uid: `uid-${name}`,
      resourceVersion: String(rv),
      generation: 1,
      labels,
      ...(s.releaseId ? { annotations: { 'hangar.io/release-id': s.releaseId } } : {}),
      ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: APPSET, uid: 'uid-appset', controller: true }],
    },
    spec: { destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
    status: {
      sync: { status: s.sync, revision: s.revision },
      health: { status: s.health },
      ...(s.reconciledAt ? { reconciledAt: s.reconciledAt } : {}),
      ...(s.op
        ? {
            operationState: {
              phase: s.op.phase,
              startedAt: s.op.startedAt,
              ...(s.op.phase === 'Succeeded' ? { finishedAt: s.op.startedAt } : {}),
              operation: { initiatedBy: { username: 'applicationset-controller', automated: true } },
              ...(s.op.revision ? { syncResult: { revision: s.op.revision } } : {}),
            },
          }
        : {}),
    },
  };
}

export function applicationSetObject(rv: number, members: Record<string, MemberState & { step: number }>, steps = 3): unknown {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { namespace: NS, name: APPSET, uid: 'uid-appset', resourceVersion: String(rv), generation: 1 },
    spec: { strategy: { type: 'RollingSync', rollingSync: { steps: Array.from({ length: steps }, (_, i) => ({ matchExpressions: [{ key: 'step', operator: 'In', values: [String(i + 1)] }] })) } } },
    status: {
      applicationStatus: Object.entries(members)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([application, m]) => ({
          application,
          status: m.status,
          step: String(m.step),
          targetRevisions: m.targetRevisions,
          message: `${application} is ${m.status}`,
          ...(m.lastTransitionTime ? { lastTransitionTime: m.lastTransitionTime } : {}),
        })),
    },
  };
}

export function factOf(o: Observation, receivedAt: number, event = 'watch', cluster = 'prod'): ApplicationFact | ApplicationSetFact {
  if (o.kind === 'app') return normaliseApplication(applicationFactBody.parse({ event, application: applicationObject(o.name, o.rv, o.state) }), cluster, receivedAt, 'watch');
  return normaliseApplicationSet(applicationSetFactBody.parse({ event, applicationSet: applicationSetObject(o.rv, o.members) }), cluster, receivedAt, 'watch');
}

/**
 * RollingSync of `revision` over `steps` (child names per step, 1-based order), every child having
 * run `from` before: refresh, then step after step (Pending, a sync, Progressing, Healthy). With
 * `staleCache`, the stale child's periodic refresh comes last unless `periodicRefresh` is false.
 * `rv` and `at` are where resourceVersions and the controllers' clock start (a later rollout
 * starts after an earlier one's).
 */
export function rollingSyncTimeline(
  steps: string[][],
  revisionOf: string | ((child: string) => string),
  options: { from?: string; staleCache?: string; periodicRefresh?: boolean; rv?: number; at?: string; degradedBefore?: string; releaseId?: string } = {},
): Observation[] {
  const own = (n: string) => (typeof revisionOf === 'string' ? revisionOf : revisionOf(n));
  const from = options.from ?? '0'.repeat(40);
  const out: Observation[] = [];
  let rv = options.rv ?? 100;
  let at = Date.parse(options.at ?? '2026-08-20T09:00:00Z');
  const time = () => new Date((at += 1000)).toISOString().replace(/\.\d+Z$/, 'Z');
  const apps = new Map<string, ChildState>();
  const members: Record<string, MemberState & { step: number }> = {};
  const before = time();
  steps.forEach((names, i) => {
    for (const n of names) {
      apps.set(n, { sync: 'Synced', health: n === options.degradedBefore ? 'Degraded' : 'Healthy', revision: from, reconciledAt: before, ...(options.releaseId ? { releaseId: options.releaseId } : {}) });
      members[n] = { status: 'Healthy', targetRevisions: [from], step: i + 1, lastTransitionTime: before };
    }
  });
  const app = (name: string, change: Partial<ChildState>) => {
    const next = { ...(apps.get(name) as ChildState), ...change };
    apps.set(name, next);
    out.push({ kind: 'app', name, rv: ++rv, state: next });
  };
  const appSet = (change: Record<string, Partial<MemberState>>) => {
    const now = time();
    for (const [n, c] of Object.entries(change)) {
      const prev = members[n] as MemberState & { step: number };
      const moved = c.status !== undefined && c.status !== prev.status;
      members[n] = { ...prev, ...c, ...(moved || c.targetRevisions ? { lastTransitionTime: now } : {}) };
    }
    out.push({ kind: 'appset', rv: ++rv, members: structuredClone(members) });
  };
  // A commit: every child is compared against the new revision (a refresh) and is OutOfSync there.
  for (const names of steps) for (const n of names) app(n, { sync: 'OutOfSync', revision: own(n), reconciledAt: time() });
  const waiting: Record<string, Partial<MemberState>> = Object.fromEntries(steps.flat().map((n) => [n, { status: 'Waiting', targetRevisions: [own(n)] }]));
  // The stale cache: the controller reads the child as Synced (its state before the refresh) and calls it Healthy.
  if (options.staleCache) waiting[options.staleCache] = { status: 'Healthy', targetRevisions: [own(options.staleCache)] };
  appSet(waiting);
  for (const names of steps) {
    const moving = names.filter((n) => n !== options.staleCache);
    appSet(Object.fromEntries(moving.map((n) => [n, { status: 'Pending' }])));
    for (const n of moving) {
      const startedAt = time();
      app(n, { op: { phase: 'Running', startedAt } });
      // The end of a sync compares the child in full.
      app(n, { sync: 'Synced', health: 'Progressing', op: { phase: 'Succeeded', startedAt, revision: own(n) }, reconciledAt: time() });
    }
    appSet(Object.fromEntries(moving.map((n) => [n, { status: 'Progressing' }])));
    // A health change is a partial reconcile: reconciledAt stays.
    for (const n of moving) app(n, { health: 'Healthy' });
    appSet(Object.fromEntries(moving.map((n) => [n, { status: 'Healthy' }])));
  }
  // Argo CD's periodic refresh (timeout.reconciliation) compares the stale child again: still OutOfSync.
  if (options.staleCache && options.periodicRefresh !== false) app(options.staleCache, { reconciledAt: time() });
  return out;
}

/** The latest observation of each object among those given (the newest resourceVersion wins, as in the reducer). */
export function latestView(delivered: readonly Observation[]): { apps: Map<string, ChildState>; appSet?: Record<string, MemberState & { step: number }> } {
  const apps = new Map<string, { rv: number; state: ChildState }>();
  let appSet: { rv: number; members: Record<string, MemberState & { step: number }> } | undefined;
  for (const o of delivered) {
    if (o.kind === 'app') {
      if ((apps.get(o.name)?.rv ?? -1) < o.rv) apps.set(o.name, { rv: o.rv, state: o.state });
    } else if ((appSet?.rv ?? -1) < o.rv) appSet = { rv: o.rv, members: o.members };
  }
  return { apps: new Map([...apps].map(([n, v]) => [n, v.state])), ...(appSet ? { appSet: appSet.members } : {}) };
}

/** The pipeline of the reducer's ApplicationSet tests: one stage per RollingSync step of `checkout`. */
export const APPSET_PIPELINE = 'checkout-appset';
export const APPSET_STEPS = [['checkout-staging'], ['checkout-eu-1', 'checkout-eu-2'], ['checkout-us']];
export const APPSET_STAGES = ['staging', 'prod-eu', 'prod-us'];
export const appSetPipelineConfig = (): ConfigFile =>
  testConfig(`
  - name: ${APPSET_PIPELINE}
    channel: C0123APPSET
    stages:
${APPSET_STAGES.map((name, i) => `      - { name: ${name}, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: ${i + 1} } }`).join('\n')}
`);
/** The target keys a stage of a record holds, sorted. */
export const targetsOf = (r: ReleaseRecord | undefined, stage: string): string[] => Object.keys(r?.stages.find((s) => s.name === stage)?.targets ?? {}).sort();
