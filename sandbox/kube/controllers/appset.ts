/**
 * ApplicationSet controller simulator: list generator → child Applications owned through a
 * controller ownerReference, and progressive sync (RollingSync) following
 * the ApplicationSet controller's progressive sync: `status.applicationStatus[]` with Waiting → Pending → Progressing → Healthy,
 * 1-based string steps selected by label matchExpressions (In/NotIn), `maxUpdate` (0 = a manual
 * gate), and syncs triggered by writing `operation` on the child.
 *
 * Fault switch `staleCache` reproduces argo-cd#22558: the controller reads a child's sync and
 * health status from a cache that still holds the state from before its revision changed, so a
 * Waiting child that looks "Synced" jumps to Healthy and later steps start out of order.
 */
import { isoSeconds, type Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore } from '../store.js';
import { WorkQueue, type ObjectKey } from './work-queue.js';

export interface AppSetFaults {
  /** true = every child, or the names of the children whose cached view is stale. */
  staleCache: boolean | string[];
}

export interface AppSetControllerOptions {
  store: ObjectStore;
  clock: Clock;
  namespaces?: string[];
  faults?: Partial<AppSetFaults>;
}

interface AppStatusEntry {
  application: string;
  status: 'Waiting' | 'Pending' | 'Progressing' | 'Healthy';
  step: string;
  message: string;
  lastTransitionTime?: string;
  targetRevisions: string[];
}

interface MatchExpression {
  key: string;
  operator: string;
  values?: string[];
}

const PRESERVED_ANNOTATIONS = ['notified.notifications.argoproj.io', 'argocd.argoproj.io/refresh', 'argocd.argoproj.io/hydrate'];

function substitute(value: unknown, params: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\{\{\s*\.?([\w.-]+)\s*\}\}/g, (whole, path: string) => {
      const v = path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), params);
      return v === undefined ? whole : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, params));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, params)]));
  return value;
}

function matches(labels: Record<string, string> | undefined, expressions: MatchExpression[]): boolean {
  return expressions.every((e) => {
    const v = labels?.[e.key];
    if (e.operator === 'In') return v !== undefined && (e.values ?? []).includes(v);
    if (e.operator === 'NotIn') return v === undefined || !(e.values ?? []).includes(v);
    return false;
  });
}

function revisionsOf(app: KubeObject): string[] {
  const sync = app.status?.sync ?? {};
  if (Array.isArray(sync.revisions) && sync.revisions.length > 0) return sync.revisions;
  return sync.revision ? [sync.revision] : [];
}

function scaledMaxUpdate(maxUpdate: number | string | undefined, total: number): number {
  if (maxUpdate === undefined) return total;
  if (typeof maxUpdate === 'number') return maxUpdate;
  const pct = Number(maxUpdate.replace('%', ''));
  const n = Math.floor((total * pct) / 100);
  return n === 0 && pct !== 0 ? 1 : n;
}

export class AppSetController {
  readonly faults: AppSetFaults;
  private readonly queue: WorkQueue;
  private readonly appSetRt: ResourceType;
  private readonly appRt: ResourceType;
  private readonly namespaces: string[];
  /** Sync/health of a child as it was before its revision last changed (the stale cache). */
  private readonly staleViews = new Map<string, { sync?: unknown; health?: unknown }>();
  private unsubscribe?: () => void;

  constructor(private readonly options: AppSetControllerOptions) {
    this.faults = { staleCache: false, ...options.faults };
    this.appSetRt = options.store.registry.byKind('ApplicationSet', 'argoproj.io');
    this.appRt = options.store.registry.byKind('Application', 'argoproj.io');
    this.namespaces = options.namespaces ?? ['argocd'];
    this.queue = new WorkQueue(options.clock, (key) => this.reconcile(key));
  }

  start(): this {
    this.queue.watch(this.options.store, [this.appSetRt], (e) =>
      this.namespaces.includes(e.object.metadata.namespace ?? '') ? [{ namespace: e.object.metadata.namespace, name: e.object.metadata.name }] : [],
    );
    this.unsubscribe = this.options.store.subscribe((e) => {
      if (e.rt !== this.appRt) return;
      const owner = e.object.metadata.ownerReferences?.find((o) => o.controller && o.kind === 'ApplicationSet');
      if (!owner || !this.namespaces.includes(e.object.metadata.namespace ?? '')) return;
      const id = `${e.object.metadata.namespace}/${e.object.metadata.name}`;
      const oldRevisions = e.old ? revisionsOf(e.old).join(',') : '';
      if (e.old && oldRevisions !== revisionsOf(e.object).join(',') && !this.staleViews.has(id)) {
        this.staleViews.set(id, { sync: e.old.status?.sync, health: e.old.status?.health });
      }
      const opChanged = JSON.stringify(e.old?.status?.operationState?.startedAt) !== JSON.stringify(e.object.status?.operationState?.startedAt);
      if (opChanged) this.staleViews.delete(id); // an operation event refreshes the cached object
      this.queue.add({ namespace: e.object.metadata.namespace, name: owner.name });
    });
    for (const ns of this.namespaces) for (const a of this.options.store.list(this.appSetRt, ns).items) this.queue.add({ namespace: ns, name: a.metadata.name });
    return this;
  }

  stop(): void {
    this.queue.stop();
    this.unsubscribe?.();
  }

  /** What the controller believes about a child: fresh, or sync/health from the stale cache. */
  private view(app: KubeObject): KubeObject {
    const stale = this.faults.staleCache;
    const applies = stale === true || (Array.isArray(stale) && stale.includes(app.metadata.name));
    const cached = this.staleViews.get(`${app.metadata.namespace}/${app.metadata.name}`);
    if (!applies || !cached) return app;
    return { ...app, status: { ...app.status, sync: { ...(cached.sync as object), revision: app.status?.sync?.revision, revisions: app.status?.sync?.revisions }, health: cached.health } };
  }

  private reconcile(key: ObjectKey): void {
    const { store, clock } = this.options;
    const appSet = store.tryGet(this.appSetRt, key.namespace, key.name);
    if (!appSet) return;
    const now = isoSeconds(clock.now());
    const ns = appSet.metadata.namespace!;
    const rolling = appSet.spec?.strategy?.type === 'RollingSync';

    // Generate and apply children.
    const desired = new Map<string, KubeObject>();
    for (const generator of appSet.spec?.generators ?? []) {
      for (const element of generator.list?.elements ?? []) {
        const app = substitute(appSet.spec.template, element as Record<string, unknown>) as KubeObject;
        desired.set(app.metadata.name, app);
      }
    }
    const ownerRef = { apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: appSet.metadata.name, uid: appSet.metadata.uid!, controller: true, blockOwnerDeletion: true };
    const owned = (a: KubeObject): boolean => a.metadata.ownerReferences?.some((o) => o.controller && o.uid === appSet.metadata.uid) ?? false;
    for (const [name, tpl] of desired) {
      const spec = structuredClone(tpl.spec);
      let prune = false;
      if (rolling) {
        prune = Boolean(spec.syncPolicy?.automated?.prune);
        if (spec.syncPolicy?.automated) spec.syncPolicy.automated.enabled = false;
      }
      void prune;
      const live = store.tryGet(this.appRt, ns, name);
      if (!live) {
        store.create(this.appRt, ns, {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name, labels: tpl.metadata.labels ?? {}, annotations: tpl.metadata.annotations ?? {}, ownerReferences: [ownerRef] },
          spec,
        });
        continue;
      }
      store.mutate(this.appRt, ns, name, (a) => {
        const preserved = Object.fromEntries(Object.entries(a.metadata.annotations ?? {}).filter(([k]) => PRESERVED_ANNOTATIONS.includes(k)));
        a.metadata.labels = tpl.metadata.labels ?? {};
        a.metadata.annotations = { ...(tpl.metadata.annotations ?? {}), ...preserved };
        a.metadata.ownerReferences = [ownerRef];
        a.spec = spec;
      });
    }
    const children = store.list(this.appRt, ns).items.filter(owned);
    for (const child of children) if (!desired.has(child.metadata.name)) store.delete(this.appRt, ns, child.metadata.name);
    const current = children.filter((c) => desired.has(c.metadata.name)).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

    if (!rolling) {
      if (appSet.status?.applicationStatus) store.mutate(this.appSetRt, ns, key.name, (o) => void delete o.status.applicationStatus, { subresource: 'status' });
      return;
    }

    const steps: { matchExpressions?: MatchExpression[]; maxUpdate?: number | string }[] = appSet.spec.strategy.rollingSync?.steps ?? [];
    const stepOf = (app: KubeObject): number => {
      const i = steps.findIndex((s) => matches(app.metadata.labels, s.matchExpressions ?? []));
      return i === -1 ? -1 : i + 1;
    };
    const previous: AppStatusEntry[] = appSet.status?.applicationStatus ?? [];
    const entries = new Map<string, AppStatusEntry>();
    for (const child of current) {
      const app = this.view(child);
      const revisions = revisionsOf(app);
      const step = String(stepOf(app));
      let e: AppStatusEntry | undefined = previous.find((p) => p.application === app.metadata.name);
      e = e ? { ...e, step } : { application: app.metadata.name, status: 'Waiting', step, message: 'No Application status found, defaulting status to Waiting', targetRevisions: revisions, lastTransitionTime: now };
      if (JSON.stringify(e.targetRevisions) !== JSON.stringify(revisions)) {
        e = { ...e, status: 'Waiting', message: 'Application has pending changes, setting status to Waiting', targetRevisions: revisions, lastTransitionTime: now };
      }
      const syncStatus = app.status?.sync?.status;
      const health = app.status?.health?.status;
      if (e.status === 'Waiting' && syncStatus === 'Synced') {
        e = health === 'Healthy'
          ? { ...e, status: 'Healthy', message: 'Application resource has synced, updating status to Healthy', lastTransitionTime: now }
          : { ...e, status: 'Progressing', message: 'Application resource has synced, updating status to Progressing', lastTransitionTime: now };
      } else if (e.status === 'Pending') {
        const ltt = e.lastTransitionTime ?? '';
        const reconciledAt: string | undefined = app.status?.reconciledAt;
        const startedAt: string | undefined = app.status?.operationState?.startedAt;
        // Upstream compares with After() on second-precision times; >= keeps the simulation from
        // stalling when both controllers act within the same second.
        if ((reconciledAt === undefined || reconciledAt >= ltt) && startedAt !== undefined && startedAt >= ltt) {
          e = { ...e, status: 'Progressing', message: 'Application resource completed a sync, updating status from Pending to Progressing', lastTransitionTime: now };
        }
      } else if (e.status === 'Progressing' && health === 'Healthy' && syncStatus === 'Synced') {
        e = { ...e, status: 'Healthy', message: 'Application resource became Healthy, updating status from Progressing to Healthy', lastTransitionTime: now };
      }
      entries.set(e.application, e);
    }

    // getAppsToSync: walk steps in order; stop after the first step that is not entirely Healthy.
    const syncable = new Set<string>();
    const byStep = steps.map((_, i) => current.filter((c) => stepOf(c) === i + 1).map((c) => c.metadata.name));
    let currentStep = steps.length;
    for (let i = 0; i < byStep.length; i++) {
      for (const name of byStep[i]!) syncable.add(name);
      if (!byStep[i]!.every((name) => entries.get(name)?.status === 'Healthy')) {
        currentStep = i + 1;
        break;
      }
    }
    // Waiting → Pending under maxUpdate.
    for (let i = 0; i < byStep.length; i++) {
      const names = byStep[i]!;
      const limit = scaledMaxUpdate(steps[i]!.maxUpdate, names.length);
      let busy = names.filter((n) => ['Pending', 'Progressing'].includes(entries.get(n)?.status ?? '')).length;
      for (const name of names) {
        const e = entries.get(name)!;
        if (syncable.has(name) && e.status === 'Waiting' && busy < limit) {
          entries.set(name, { ...e, status: 'Pending', message: 'Application moved to Pending status, watching for the Application resource to start Progressing', lastTransitionTime: now });
          busy++;
        }
      }
    }
    const applicationStatus = [...entries.values()].sort((a, b) => a.application.localeCompare(b.application));
    const complete = applicationStatus.every((e) => e.status === 'Healthy');
    const resources = current.map((c) => ({
      group: 'argoproj.io',
      version: 'v1alpha1',
      kind: 'Application',
      namespace: ns,
      name: c.metadata.name,
      ...(c.status?.sync?.status ? { status: c.status.sync.status } : {}),
      ...(c.status?.health ? { health: { status: c.status.health.status, ...(c.status.health.message ? { message: c.status.health.message } : {}) } } : {}),
    }));
    store.mutate(
      this.appSetRt,
      ns,
      key.name,
      (o) => {
        let conditions: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[] = o.status?.conditions ?? [];
        const set = (next: { type: string; status: string; reason: string; message: string }): void => {
          const prev = conditions.find((c) => c.type === next.type);
          const same = prev && prev.status === next.status && prev.message === next.message;
          conditions = [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime: same ? prev.lastTransitionTime : now }];
        };
        set({ type: 'ResourcesUpToDate', status: 'True', reason: 'ApplicationSetUpToDate', message: 'All applications have been generated successfully' });
        set(
          complete
            ? { type: 'RolloutProgressing', status: 'False', reason: 'ApplicationSetRolloutComplete', message: 'ApplicationSet Rollout has completed' }
            : { type: 'RolloutProgressing', status: 'True', reason: 'ApplicationSetModified', message: `ApplicationSet is performing rollout of step ${currentStep}` },
        );
        // v3.4+ health: RolloutProgressing=True → Progressing; ResourcesUpToDate=True → Healthy.
        const health = complete ? { status: 'Healthy', message: 'ApplicationSet is healthy' } : { status: 'Progressing', message: `ApplicationSet is performing rollout of step ${currentStep}` };
        const prevHealth = o.status?.health;
        o.status = {
          ...o.status,
          applicationStatus,
          conditions,
          resources,
          resourcesCount: resources.length,
          health: { ...health, lastTransitionTime: prevHealth?.status === health.status ? prevHealth.lastTransitionTime : now },
        };
      },
      { subresource: 'status' },
    );

    // SyncDesiredApplications: trigger a sync on syncable Pending children (once per Pending transition).
    for (const child of current) {
      const e = entries.get(child.metadata.name)!;
      if (!syncable.has(child.metadata.name) || e.status !== 'Pending' || child.operation) continue;
      const startedAt: string | undefined = child.status?.operationState?.startedAt;
      if (startedAt !== undefined && startedAt >= (e.lastTransitionTime ?? '')) continue;
      store.mutate(this.appRt, ns, child.metadata.name, (a) => {
        a.operation = {
          initiatedBy: { username: 'applicationset-controller', automated: true },
          info: [{ name: 'Reason', value: 'ApplicationSet RollingSync triggered a sync of this Application resource' }],
          sync: { prune: Boolean(a.spec?.syncPolicy?.automated?.prune), ...(a.spec?.syncPolicy?.syncOptions ? { syncOptions: a.spec.syncPolicy.syncOptions } : {}) },
          retry: a.spec?.syncPolicy?.retry ?? { limit: 5 },
        };
      });
    }
  }
}
