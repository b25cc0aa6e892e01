/**
 * Approving the next RollingSync step of an ApplicationSet: sync that step's Applications the way
 * the ApplicationSet controller does (`operation` on the child; docs/actions.md), but only on
 * fresh state and only when every earlier step is Healthy at the expected revision. The decision
 * is Glidepath's own, made because the controller's may rest on a stale cache (argo-cd#22558).
 */
import type { KubeApi } from './api.js';
import { matchesExpressions } from '../model/label-selector.js';
import { KubeActionError, type KubeCall } from './errors.js';
import { boundedEach, checkFreshness, type FreshnessSnapshot } from './freshness-reader.js';
import { revisionsOf, short, type ChildFreshness } from './freshness.js';
import { done, refused, type Refusable } from './refusal.js';
import { APPLICATIONS } from './resources.js';
import { applicationCoreSchema, type ApplicationCore as Application } from '../model/application.js';
import type { ApplicationSet } from '../model/application-set.js';

/** 1-based step of each child, as the controller assigns it (first matching step; -1 = none). */
export function stepsOfChildren(appSet: ApplicationSet, children: readonly Application[]): Map<string, number> {
  const steps = appSet.spec?.strategy?.rollingSync?.steps ?? [];
  return new Map(
    children.map((app) => {
      const i = steps.findIndex((s) => matchesExpressions(app.metadata.labels, s.matchExpressions ?? []));
      return [app.metadata.name, i === -1 ? -1 : i + 1];
    }),
  );
}


function atRevision(app: Application, revision: string): boolean {
  const revisions = revisionsOf(app);
  return revisions.length > 0 && revisions.every((r) => r === revision);
}

function describeApp(app: Application): string {
  const sync = app.status?.sync?.status ?? 'Unknown';
  const health = app.status?.health?.status ?? 'Unknown';
  const revision = revisionsOf(app).map(short).join(',') || 'no revision';
  return `${app.metadata.name} is ${sync}/${health} at ${revision}`;
}

function listed(items: string[], max = 10): string {
  return items.length > max ? `${items.slice(0, max).join('; ')} and ${items.length - max} more` : items.join('; ');
}

export interface RollingSyncStepResult {
  appSet: string;
  step: number;
  revision: string;
  /** Applications whose sync Glidepath requested. */
  synced: string[];
  /** Already Synced and Healthy at the revision, or already syncing: nothing to do. */
  skipped: { name: string; why: string }[];
  failed: { name: string; error: KubeActionError }[];
}

/** Why a RollingSync step was not approved, with what the caller can offer next (a refresh of the stale ones). */
export type RollingSyncRefusal =
  | { why: 'not-rolling-sync' }
  | { why: 'no-such-step' }
  | { why: 'empty-step' }
  | { why: 'stale'; stale: ChildFreshness[] }
  | { why: 'unfinished'; unfinished: string[] }
  | { why: 'not-compared'; behind: string[] };

export type RollingSyncOutcome = Refusable<RollingSyncStepResult, RollingSyncRefusal>;

export interface RollingSyncOptions {
  /** Who approved, for `operation.initiatedBy.username` and the Reason (e.g. `glidepath:U0ALICE`). */
  initiatedBy?: string;
  now?: () => number;
  concurrency?: number;
  /** Glidepath's own reads (the person's identity sends the writes): re-reading a child after a conflict. */
  reader?: KubeApi;
}

/** The stale children a step's approval depends on: those of this step and every earlier one. */
export function staleForStep(snapshot: Pick<FreshnessSnapshot, 'appSet' | 'children' | 'report'>, step: number): ChildFreshness[] {
  const stepOf = stepsOfChildren(snapshot.appSet, snapshot.children);
  const dependsOn = new Set(snapshot.children.filter((c) => (stepOf.get(c.metadata.name) ?? -1) >= 1 && stepOf.get(c.metadata.name)! <= step).map((c) => c.metadata.name));
  return snapshot.report.stale.filter((s) => dependsOn.has(s.name));
}

export function staleReason(appSetName: string, step: number, stale: readonly ChildFreshness[]): string {
  return `Not approving step ${step} of ${appSetName}: ${stale.length} of its Applications are not fresh (${listed(stale.map((s) => `${s.name}: ${s.reason}`))}); refresh them and approve again; nothing was changed`;
}

/**
 * `options.snapshot`: what the engine's freshness gate read a moment ago; the step is judged and
 * written on that same read (each patch carries its resourceVersion), so nothing is read twice.
 */
export async function syncRollingSyncStep(api: KubeApi, namespace: string, appSetName: string, step: number, expectedRevision: string, options: RollingSyncOptions & { snapshot?: FreshnessSnapshot } = {}): Promise<RollingSyncOutcome> {
  const call: KubeCall = { cluster: api.cluster, verb: 'patch', resource: 'applications', namespace, name: appSetName };
  const snapshot = options.snapshot ?? (await checkFreshness(api, namespace, appSetName, { now: options.now }));
  const { appSet, children } = snapshot;
  if (appSet.spec?.strategy?.type !== 'RollingSync') {
    return refused(`ApplicationSet ${appSetName} in ${api.cluster}/${namespace} does not use RollingSync; there are no steps to approve; nothing was changed`, call, { why: 'not-rolling-sync' });
  }
  const stepCount = appSet.spec.strategy.rollingSync?.steps?.length ?? 0;
  if (!Number.isInteger(step) || step < 1 || step > stepCount) {
    return refused(`ApplicationSet ${appSetName} has ${stepCount} RollingSync steps; there is no step ${step}; nothing was changed`, call, { why: 'no-such-step' });
  }
  const stepOf = stepsOfChildren(appSet, children);
  const inStep = (n: number): Application[] => children.filter((c) => stepOf.get(c.metadata.name) === n);
  const thisStep = inStep(step);
  if (thisStep.length === 0) return refused(`Step ${step} of ${appSetName} selects no Applications; nothing was changed`, call, { why: 'empty-step' });

  const stale = staleForStep(snapshot, step);
  if (stale.length > 0) return refused(staleReason(appSetName, step, stale), call, { why: 'stale', stale });

  const unfinished: string[] = [];
  for (let earlier = 1; earlier < step; earlier++) {
    for (const app of inStep(earlier)) {
      const done = app.status?.sync?.status === 'Synced' && app.status?.health?.status === 'Healthy' && atRevision(app, expectedRevision);
      if (!done) unfinished.push(`step ${earlier}: ${describeApp(app)}`);
    }
  }
  if (unfinished.length > 0) {
    return refused(`Not approving step ${step} of ${appSetName}: earlier steps are not Healthy at ${short(expectedRevision)} (${listed(unfinished)}); nothing was changed`, call, { why: 'unfinished', unfinished });
  }
  const behind = thisStep.filter((app) => !atRevision(app, expectedRevision));
  if (behind.length > 0) {
    return refused(`Not approving step ${step} of ${appSetName}: Argo CD has not compared ${listed(behind.map(describeApp))} against ${short(expectedRevision)} yet; refresh and approve again; nothing was changed`, call, {
      why: 'not-compared',
      behind: behind.map((a) => a.metadata.name),
    });
  }

  const result: RollingSyncStepResult = { appSet: appSetName, step, revision: expectedRevision, synced: [], skipped: [], failed: [] };
  const toSync: Application[] = [];
  for (const app of thisStep) {
    if (app.operation) result.skipped.push({ name: app.metadata.name, why: 'a sync is already requested' });
    else if (app.status?.operationState?.phase === 'Running') result.skipped.push({ name: app.metadata.name, why: 'a sync is running' });
    else if (app.status?.sync?.status === 'Synced' && app.status?.health?.status === 'Healthy') result.skipped.push({ name: app.metadata.name, why: `already Synced and Healthy at ${short(expectedRevision)}` });
    else toSync.push(app);
  }
  const who = options.initiatedBy ?? 'glidepath';
  await boundedEach(toSync, options.concurrency ?? 8, async (app) => {
    const policy = app.spec?.syncPolicy;
    // What the ApplicationSet controller writes, pinned to the approved revision so that a newer,
    // unapproved commit cannot ride along.
    const body = {
      metadata: { resourceVersion: app.metadata.resourceVersion },
      operation: {
        initiatedBy: { username: who, automated: false },
        info: [{ name: 'Reason', value: `RollingSync step ${step} of ApplicationSet ${appSetName} approved through Glidepath by ${who}` }],
        sync: { revision: expectedRevision, prune: Boolean(policy?.automated?.prune), ...(policy?.syncOptions ? { syncOptions: policy.syncOptions } : {}) },
        retry: policy?.retry ?? { limit: 5 },
      },
    };
    try {
      await patchUnlessSpecChanged(api, options.reader ?? api, namespace, app, body);
      result.synced.push(app.metadata.name);
    } catch (err) {
      const error = err instanceof KubeActionError ? err : new KubeActionError('server', String(err));
      const explained =
        error.kind === 'conflict'
          ? new KubeActionError('conflict', `${app.metadata.name} changed while you clicked; it was not synced: look at step ${step} again`, error.call, 409, undefined, { cause: error })
          : error;
      result.failed.push({ name: app.metadata.name, error: explained });
    }
  });
  result.synced.sort();
  return done(result);
}

/**
 * The sync, sent on the resourceVersion the step was judged on. Argo CD writes an Application's
 * status all the time (each reconcile, and at once after a refresh): a conflict where only the
 * status moved (its spec and labels unchanged, no sync requested or running) is no change of what the person
 * approved, so the sync is sent once more on the version read now. A changed spec, or a sync that
 * started meanwhile, is a real change: the conflict stands.
 */
async function patchUnlessSpecChanged(api: KubeApi, reader: KubeApi, namespace: string, app: Application, body: { metadata: { resourceVersion?: string } }): Promise<void> {
  try {
    await api.patch(APPLICATIONS, namespace, app.metadata.name, body);
  } catch (err) {
    if (!(err instanceof KubeActionError) || err.kind !== 'conflict') throw err;
    const now = applicationCoreSchema.parse(await reader.get(APPLICATIONS, namespace, app.metadata.name));
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    // Labels place a child in its step (matchExpressions): a relabelled child is a real change too.
    const statusOnly = same(now.spec, app.spec) && same(now.metadata.labels, app.metadata.labels) && !now.operation && now.status?.operationState?.phase !== 'Running';
    if (!statusOnly) throw err;
    await api.patch(APPLICATIONS, namespace, app.metadata.name, { ...body, metadata: { resourceVersion: now.metadata.resourceVersion } });
  }
}
