/**
 * Argo CD application controller simulator. Honours `argocd.argoproj.io/refresh` after a
 * reconcile delay (sets status.reconciledAt, compares the desired revision, sets status.sync,
 * then removes the annotation in a second write, as the real controller does); reconciles every
 * 120 s + jitter; runs `operation.sync` (Running → Succeeded / Failed after retries / Error) and
 * applies the revision to the app's Rollouts; an optional PostSync hook keeps the operation Running
 * while a Rollout is paused (the hook-pinned sync). Health follows Argo CD's Rollout health.lua.
 *
 * Fault switch `behind` (Application names): the controller has not got to them (a long reconcile
 * queue), so neither the periodic reconcile nor a refresh request moves their reconciledAt until
 * it is cleared; operations still run.
 */
import { rolloutManifest } from '../builders.js';
import { isoSeconds, type Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore } from '../store.js';
import type { DesiredManifests, SimulatedGit } from './git.js';
import { WorkQueue, type ObjectKey } from './work-queue.js';

export const REFRESH_ANNOTATION = 'argocd.argoproj.io/refresh';
export const TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';

export interface ArgoCdControllerOptions {
  store: ObjectStore;
  clock: Clock;
  git: SimulatedGit;
  /** Namespaces whose Applications this instance reconciles (default ["argocd"]). */
  namespaces?: string[];
  /** Destination clusters by `destination.name` or `destination.server` (default: the same store). */
  destinations?: Record<string, ObjectStore>;
  refreshDelayMs?: number;
  reconcileEveryMs?: number;
  jitterMs?: number;
  syncDurationMs?: number;
  retryBackoffMs?: number;
  random?: () => number;
  /**
   * The first N refresh requests of each Application are taken and dropped: the annotation is
   * removed and nothing is reconciled (argo-cd#29347, where a refresh asked once does nothing and
   * only the periodic resync moves the app on). 0 (default): every refresh is honoured.
   */
  ignoreRefreshes?: number;
}

interface Health {
  status: string;
  message?: string;
}

const HEALTH_ORDER = ['Healthy', 'Suspended', 'Progressing', 'Missing', 'Degraded', 'Unknown'];

/** Argo CD's resource_customizations/argoproj.io/Rollout/health.lua, reduced to what the simulator needs. */
export function rolloutHealth(r: KubeObject): Health {
  const s = r.status;
  if (!s) return { status: 'Progressing', message: 'Waiting for rollout spec update to be observed' };
  if (s.observedGeneration !== undefined && s.observedGeneration !== String(r.metadata.generation)) {
    return { status: 'Progressing', message: 'Waiting for rollout spec update to be observed' };
  }
  switch (s.phase) {
    case 'Paused':
      return { status: 'Suspended', message: 'Rollout is paused' };
    case 'Degraded':
      return { status: 'Degraded', message: s.message };
    case 'Healthy':
      return { status: 'Healthy' };
    default:
      return { status: 'Progressing', message: s.message };
  }
}

function trackingId(app: KubeObject, namespace: string, name: string): string {
  const prefix = app.metadata.namespace === 'argocd' ? app.metadata.name : `${app.metadata.namespace}_${app.metadata.name}`;
  return `${prefix}:argoproj.io/Rollout:${namespace}/${name}`;
}

export interface ArgoCdFaults {
  /** Applications the controller has not reconciled lately: no refresh until cleared. */
  behind: string[];
}

export class ArgoCdController {
  readonly faults: ArgoCdFaults = { behind: [] };
  private readonly queue: WorkQueue;
  private readonly appRt: ResourceType;
  private readonly namespaces: string[];
  private readonly refreshSeen = new Map<string, number>();
  private readonly nextPeriodic = new Map<string, number>();
  /** Start of the current sync attempt (retries start later than operationState.startedAt). */
  private readonly attemptStart = new Map<string, number>();
  /** Revision an operation resolved when it started, and whether it has been applied yet. */
  private readonly operationRevision = new Map<string, { sha: string | undefined; applied: boolean }>();
  private readonly unsubscribers: (() => void)[] = [];
  /** Refresh requests dropped so far, per Application, of the `ignoreRefreshes` budget. */
  private readonly refreshesIgnored = new Map<string, number>();
  private ignoreRefreshes: number;
  /** Only these Applications' refreshes are dropped (names); undefined: every Application's. */
  private ignoreRefreshesOf: Set<string> | undefined;
  private historyId = 0;

  constructor(private readonly options: ArgoCdControllerOptions) {
    this.appRt = options.store.registry.byKind('Application', 'argoproj.io');
    this.namespaces = options.namespaces ?? ['argocd'];
    this.ignoreRefreshes = options.ignoreRefreshes ?? 0;
    this.queue = new WorkQueue(options.clock, (key) => this.reconcile(key));
  }

  start(): this {
    this.queue.watch(this.options.store, [this.appRt], (e) =>
      this.namespaces.includes(e.object.metadata.namespace ?? '') ? [{ namespace: e.object.metadata.namespace, name: e.object.metadata.name }] : [],
    );
    const stores = new Set([this.options.store, ...Object.values(this.options.destinations ?? {})]);
    for (const store of stores) {
      const rolloutRt = store.registry.byKind('Rollout', 'argoproj.io');
      this.unsubscribers.push(
        store.subscribe((e) => {
          if (e.rt !== rolloutRt) return;
          const id = e.object.metadata.annotations?.[TRACKING_ANNOTATION] ?? e.old?.metadata.annotations?.[TRACKING_ANNOTATION];
          const owner = id?.split(':')[0];
          if (!owner) return;
          const [ns, name] = owner.includes('_') ? owner.split('_') : ['argocd', owner];
          if (this.namespaces.includes(ns!)) this.queue.add({ namespace: ns, name: name! });
        }),
      );
    }
    for (const ns of this.namespaces) {
      for (const app of this.options.store.list(this.appRt, ns).items) this.queue.add({ namespace: ns, name: app.metadata.name });
    }
    return this;
  }

  /** From now on, drop the next `count` refresh requests of each Application (as `ignoreRefreshes`), or only of those named. */
  dropNextRefreshes(count: number, names?: readonly string[]): void {
    this.ignoreRefreshes = count;
    this.ignoreRefreshesOf = names ? new Set(names) : undefined;
    this.refreshesIgnored.clear();
  }

  stop(): void {
    this.queue.stop();
    for (const u of this.unsubscribers) u();
  }

  private destination(app: KubeObject): ObjectStore {
    const d = app.spec?.destination ?? {};
    return this.options.destinations?.[d.name] ?? this.options.destinations?.[d.server] ?? this.options.store;
  }

  private desired(app: KubeObject, sha: string | undefined): DesiredManifests | undefined {
    const source = app.spec?.source ?? {};
    return sha ? this.options.git.manifests(source.repoURL, sha, source.path ?? '') : undefined;
  }

  private managedRollouts(app: KubeObject): KubeObject[] {
    const dest = this.destination(app);
    const ns = app.spec?.destination?.namespace;
    return dest.list(dest.registry.byKind('Rollout', 'argoproj.io'), ns).items.filter((r) => r.metadata.annotations?.[TRACKING_ANNOTATION]?.startsWith(trackingId(app, '', '').split(':')[0] + ':'));
  }

  /** Compares live Rollouts with the manifests at `sha`. */
  private compare(app: KubeObject, sha: string | undefined): { sync: string; health: Health } {
    const desired = this.desired(app, sha);
    if (!sha || !desired) return { sync: 'Unknown', health: { status: 'Unknown', message: 'unable to resolve revision' } };
    const live = this.managedRollouts(app);
    let synced = true;
    const healths: Health[] = [];
    for (const d of desired.rollouts) {
      const r = live.find((x) => x.metadata.name === d.name);
      if (!r) {
        synced = false;
        healths.push({ status: 'Missing', message: `Rollout ${d.name} is missing` });
        continue;
      }
      const image = r.spec?.template?.spec?.containers?.[0]?.image;
      const annotationsMatch = Object.entries(d.annotations ?? {}).every(([k, v]) => r.metadata.annotations?.[k] === v);
      const labelsMatch = Object.entries(d.labels ?? {}).every(([k, v]) => r.metadata.labels?.[k] === v);
      const replicasMatch = d.replicas === undefined || r.spec?.replicas === d.replicas;
      if (image !== d.image || !annotationsMatch || !labelsMatch || !replicasMatch) synced = false;
      healths.push(rolloutHealth(r));
    }
    const worst = healths.reduce<Health>((w, h) => (HEALTH_ORDER.indexOf(h.status) > HEALTH_ORDER.indexOf(w.status) ? h : w), { status: 'Healthy' });
    return { sync: synced ? 'Synced' : 'OutOfSync', health: worst };
  }

  private reconcile(key: ObjectKey): void {
    const { store, clock, git } = this.options;
    const app = store.tryGet(this.appRt, key.namespace, key.name);
    const id = `${key.namespace}/${key.name}`;
    if (!app) {
      this.refreshSeen.delete(id);
      this.nextPeriodic.delete(id);
      this.refreshesIgnored.delete(id);
      return;
    }
    const now = clock.now();
    const nowIso = isoSeconds(now);
    const source = app.spec?.source ?? {};
    const status: Record<string, any> = structuredClone(app.status ?? {}); // eslint-disable-line @typescript-eslint/no-explicit-any
    let wakeAt = Infinity;
    const wake = (at: number): void => void (wakeAt = Math.min(wakeAt, at));

    // Refresh: requested by annotation (after the reconcile delay) or periodic.
    const requested = app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined;
    if (requested && !this.refreshSeen.has(id)) this.refreshSeen.set(id, now);
    if (!requested) this.refreshSeen.delete(id);
    if (!this.nextPeriodic.has(id)) this.nextPeriodic.set(id, status.reconciledAt ? now + this.period() : now);
    const refreshDue = requested ? now >= this.refreshSeen.get(id)! + (this.options.refreshDelayMs ?? 1000) : false;
    const ignoring = (this.ignoreRefreshesOf?.has(key.name) ?? true) && (this.refreshesIgnored.get(id) ?? 0) < this.ignoreRefreshes;
    if (refreshDue && ignoring) {
      // The request is taken (the annotation goes) and nothing is reconciled.
      this.refreshesIgnored.set(id, (this.refreshesIgnored.get(id) ?? 0) + 1);
      this.refreshSeen.delete(id);
      store.patch(this.appRt, key.namespace, key.name, 'json', [{ op: 'remove', path: `/metadata/annotations/${REFRESH_ANNOTATION.replace('/', '~1')}` }]);
      if (this.nextPeriodic.has(id)) this.queue.requeueAt(key, this.nextPeriodic.get(id)!);
      return;
    }
    const periodicDue = now >= this.nextPeriodic.get(id)!;
    const behind = this.faults.behind.includes(app.metadata.name);
    const fullRefresh = (refreshDue || periodicDue) && !behind;
    if (behind && periodicDue) this.nextPeriodic.set(id, now + this.period());
    if (requested && !refreshDue) wake(this.refreshSeen.get(id)! + (this.options.refreshDelayMs ?? 1000));

    const latest = git.resolve(source.repoURL, source.targetRevision);
    if (fullRefresh) {
      status.reconciledAt = nowIso;
      this.nextPeriodic.set(id, now + this.period());
    }
    wake(this.nextPeriodic.get(id)!);

    // Operation.
    let operation = app.operation as { sync?: { revision?: string; prune?: boolean }; initiatedBy?: object } | undefined;
    let syncedRevision: string | undefined;
    const running = status.operationState?.phase === 'Running';
    if (operation && !running) {
      // `operation` is removed when an operation finishes, so one present here is a new request.
      status.operationState = { operation, phase: 'Running', message: 'one or more tasks are running', startedAt: nowIso };
      this.attemptStart.set(id, now);
      this.operationRevision.set(id, { sha: git.resolve(source.repoURL, operation.sync?.revision ?? source.targetRevision), applied: false });
      wake(now + (this.options.syncDurationMs ?? 2000));
    } else if (running) {
      const result = this.progressOperation(app, status, now, nowIso, wake);
      if (result === 'done') {
        operation = undefined;
        if (status.operationState.phase === 'Succeeded') syncedRevision = status.operationState.syncResult?.revision;
      }
    }

    // A full refresh resolves git again; a finished sync compares at what it synced; any other
    // reconcile (a resource changed) re-compares at the last compared revision.
    const comparedRevision: string | undefined = fullRefresh ? latest : (syncedRevision ?? status.sync?.revision ?? latest);
    const { sync, health } = this.compare(app, comparedRevision);
    status.sync = { status: sync, ...(comparedRevision ? { revision: comparedRevision } : {}), comparedTo: { source, destination: app.spec?.destination ?? {} } };
    // As Argo CD summarises its live resources: the images they run.
    const images = [...new Set(this.managedRollouts(app).map((r) => r.spec?.template?.spec?.containers?.[0]?.image).filter((i): i is string => typeof i === 'string'))].sort();
    if (images.length > 0) status.summary = { ...status.summary, images };
    if (status.health?.status !== health.status || status.health?.message !== health.message) {
      status.health = { status: health.status, ...(health.message ? { message: health.message } : {}), lastTransitionTime: nowIso };
    }

    // Automated sync (not for apps a RollingSync owns: it writes automated.enabled=false).
    const automated = app.spec?.syncPolicy?.automated;
    const lastSynced = (status.history ?? []).at(-1)?.revision;
    if (automated && automated.enabled !== false && !operation && status.operationState?.phase !== 'Running' && sync === 'OutOfSync' && latest) {
      if (latest !== lastSynced || automated.selfHeal) {
        operation = { initiatedBy: { username: 'argocd-application-controller', automated: true }, sync: { revision: latest, prune: Boolean(automated.prune) } };
        this.queue.add(key);
      }
    }

    // Persist: status (Application has no status subresource), then drop the refresh annotation.
    const written = store.mutate(this.appRt, key.namespace, key.name, (o) => {
      o.status = status;
      if (operation) o.operation = operation;
      else delete o.operation;
    });
    if (refreshDue && !behind && written.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined) {
      store.patch(this.appRt, key.namespace, key.name, 'json', [{ op: 'remove', path: `/metadata/annotations/${REFRESH_ANNOTATION.replace('/', '~1')}` }]);
      this.refreshSeen.delete(id);
    }
    if (wakeAt !== Infinity) this.queue.requeueAt(key, wakeAt);
  }

  private period(): number {
    const random = this.options.random ?? Math.random;
    return (this.options.reconcileEveryMs ?? 120_000) + Math.floor(random() * (this.options.jitterMs ?? 60_000));
  }

  private progressOperation(app: KubeObject, status: Record<string, any>, now: number, nowIso: string, wake: (at: number) => void): 'running' | 'done' { // eslint-disable-line @typescript-eslint/no-explicit-any
    const op = status.operationState;
    const source = app.spec?.source ?? {};
    const duration = this.options.syncDurationMs ?? 2000;
    const id = `${app.metadata.namespace}/${app.metadata.name}`;
    const attemptStarted = this.attemptStart.get(id) ?? Date.parse(op.startedAt);
    const resolved = this.operationRevision.get(id) ?? { sha: this.options.git.resolve(source.repoURL, op.operation?.sync?.revision ?? source.targetRevision), applied: false };
    this.operationRevision.set(id, resolved);
    if (now < attemptStarted + duration && !resolved.applied) {
      wake(attemptStarted + duration);
      return 'running';
    }
    const finish = (phase: string, message: string): 'done' => {
      op.phase = phase;
      op.message = message;
      op.finishedAt = nowIso;
      this.attemptStart.delete(id);
      this.operationRevision.delete(id);
      return 'done';
    };
    const requested = op.operation?.sync?.revision;
    const sha = resolved.sha;
    if (!sha) return finish('Error', `ComparisonError: unable to resolve '${requested ?? source.targetRevision}' to a commit SHA`);
    const desired = this.desired(app, sha);
    if (!desired) return finish('Error', `ComparisonError: app path '${source.path}' does not exist`);
    if (desired.failSync) {
      const limit = op.operation?.retry?.limit ?? 0;
      const count = op.retryCount ?? 0;
      op.syncResult = undefined;
      if (count < limit) {
        op.retryCount = count + 1;
        op.message = `${desired.failSync}. Retrying attempt #${count + 1} at ${isoSeconds(now + (this.options.retryBackoffMs ?? 5000))}.`;
        this.attemptStart.set(id, now + (this.options.retryBackoffMs ?? 5000));
        delete op.syncResult;
        wake(now + (this.options.retryBackoffMs ?? 5000) + duration);
        return 'running';
      }
      op.syncResult = { revision: sha, source };
      return finish('Failed', desired.failSync);
    }
    if (!resolved.applied) {
      this.apply(app, desired);
      resolved.applied = true;
    }
    const dest = app.spec?.destination?.namespace;
    const resources = desired.rollouts.map((r) => ({ group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout', namespace: dest, name: r.name, status: 'Synced', message: `rollout.argoproj.io/${r.name} configured`, syncPhase: 'Sync' }));
    op.syncResult = { revision: sha, source, resources };
    if (desired.postSyncHook) {
      const blocked = this.managedRollouts(app).some((r) => rolloutHealth(r).status !== 'Healthy');
      const hook = { group: 'batch', version: 'v1', kind: 'Job', namespace: dest, name: `${app.metadata.name}-postsync`, hookType: 'PostSync', syncPhase: 'PostSync' };
      if (blocked) {
        op.syncResult.resources.push({ ...hook, hookPhase: 'Running', status: 'Synced', message: 'job is running' });
        op.message = `waiting for completion of hook batch/Job/${app.metadata.name}-postsync`;
        return 'running';
      }
      op.syncResult.resources.push({ ...hook, hookPhase: 'Succeeded', status: 'Synced', message: 'job completed' });
    }
    status.history = [
      ...(status.history ?? []),
      { id: this.historyId++, revision: sha, deployedAt: nowIso, deployStartedAt: op.startedAt, source, initiatedBy: op.operation?.initiatedBy ?? {} },
    ].slice(-10);
    status.reconciledAt = nowIso;
    return finish('Succeeded', 'successfully synced (all tasks run)');
  }

  private apply(app: KubeObject, desired: DesiredManifests): void {
    const dest = this.destination(app);
    const rt = dest.registry.byKind('Rollout', 'argoproj.io');
    const ns = app.spec?.destination?.namespace;
    for (const d of desired.rollouts) {
      const annotations = { ...d.annotations, [TRACKING_ANNOTATION]: trackingId(app, ns, d.name) };
      if (!dest.tryGet(rt, ns, d.name)) {
        dest.create(rt, ns, rolloutManifest({ namespace: ns, name: d.name, image: d.image, replicas: d.replicas, steps: d.steps, labels: d.labels, annotations, trafficRouting: d.trafficRouting }));
        continue;
      }
      dest.mutate(rt, ns, d.name, (r) => {
        r.spec.template.spec.containers[0].image = d.image;
        if (d.replicas !== undefined) r.spec.replicas = d.replicas;
        r.metadata.labels = { ...r.metadata.labels, ...d.labels };
        r.metadata.annotations = { ...r.metadata.annotations, ...annotations };
        if (d.steps) r.spec.strategy = { canary: { ...r.spec.strategy?.canary, steps: d.steps } };
      });
    }
  }
}
