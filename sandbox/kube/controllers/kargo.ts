/**
 * Kargo controller simulator: Promotions go Pending → Running → Succeeded / Failed / Errored /
 * Aborted (abort via the `kargo.akuity.io/abort` annotation), one at a time per Stage in ULID
 * order; a success updates the Stage's freightHistory, lastPromotion and freightSummary. Stage
 * health is recomputed live from its Argo CD Applications (annotation `kargo.akuity.io/argocd-context`),
 * so an app that autoscales flips the Stage to Progressing; a Healthy Stage after a successful
 * Promotion records the Freight's `status.verifiedIn` (never removed afterwards).
 */
import { isoSeconds, type Clock } from '../clock.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import { ABORT_ANNOTATION, STAGE_LABEL } from './kargo-admission.js';
import { advanceVerification, type VerificationOutcome } from './kargo-verification.js';
import { WorkQueue, type ObjectKey } from './work-queue.js';

export const ARGOCD_CONTEXT_ANNOTATION = 'kargo.akuity.io/argocd-context';
const TERMINAL = ['Succeeded', 'Failed', 'Errored', 'Aborted'];

export interface KargoFaults {
  /** Makes the Promotions it names end Failed or Errored with a message, at the step aliased `atStep` (default: the last). */
  fail?: (promotion: KubeObject) => { phase: 'Failed' | 'Errored'; message: string; atStep?: string } | undefined;
  /** How a Stage's verification ends (default Successful). */
  verify?: (stage: KubeObject) => VerificationOutcome | undefined;
}

export interface KargoControllerOptions {
  store: ObjectStore;
  clock: Clock;
  /** Where the Stages' Argo CD Applications live (default: the same store). */
  argocdStore?: ObjectStore;
  stepDurationMs?: number;
  faults?: KargoFaults;
}

type Condition = { type: string; status: string; reason: string; message: string; lastTransitionTime: string };

function setCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const old = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : now;
  return [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

const APP_TO_STAGE_HEALTH: Record<string, string> = {
  Healthy: 'Healthy',
  Progressing: 'Progressing',
  Suspended: 'Progressing',
  Degraded: 'Unhealthy',
  Missing: 'Unhealthy',
  Unknown: 'Unknown',
};
const HEALTH_SEVERITY = ['Healthy', 'NotApplicable', 'Progressing', 'Unknown', 'Unhealthy'];

export class KargoController {
  readonly faults: KargoFaults;
  private readonly promotions: WorkQueue;
  private readonly stages: WorkQueue;
  private readonly promoRt: ResourceType;
  private readonly stageRt: ResourceType;
  private readonly freightRt: ResourceType;
  private readonly eventRt: ResourceType;
  private readonly stepStarted = new Map<string, number>();
  private readonly unsubscribers: (() => void)[] = [];

  constructor(private readonly options: KargoControllerOptions) {
    const r = options.store.registry;
    this.faults = options.faults ?? {};
    this.promoRt = r.byKind('Promotion', 'kargo.akuity.io');
    this.stageRt = r.byKind('Stage', 'kargo.akuity.io');
    this.freightRt = r.byKind('Freight', 'kargo.akuity.io');
    this.eventRt = r.byKind('Event', '');
    this.promotions = new WorkQueue(options.clock, (k) => this.reconcilePromotion(k));
    this.stages = new WorkQueue(options.clock, (k) => this.reconcileStage(k));
  }

  private get argocd(): ObjectStore {
    return this.options.argocdStore ?? this.options.store;
  }

  start(): this {
    const { store } = this.options;
    this.promotions.watch(store, [this.promoRt]);
    this.stages.watch(store, [this.stageRt, this.promoRt], (e: StoreEvent) =>
      e.rt === this.stageRt ? [{ namespace: e.object.metadata.namespace, name: e.object.metadata.name }] : [{ namespace: e.object.metadata.namespace, name: e.object.spec?.stage }],
    );
    const appRt = this.argocd.registry.byKind('Application', 'argoproj.io');
    this.unsubscribers.push(
      this.argocd.subscribe((e) => {
        if (e.rt !== appRt) return;
        for (const stage of store.list(this.stageRt, undefined).items) {
          if (this.stageApps(stage).some((a) => a.name === e.object.metadata.name && a.namespace === e.object.metadata.namespace)) {
            this.stages.add({ namespace: stage.metadata.namespace, name: stage.metadata.name });
          }
        }
      }),
    );
    for (const p of store.list(this.promoRt, undefined).items) this.promotions.add({ namespace: p.metadata.namespace, name: p.metadata.name });
    for (const s of store.list(this.stageRt, undefined).items) this.stages.add({ namespace: s.metadata.namespace, name: s.metadata.name });
    return this;
  }

  stop(): void {
    this.promotions.stop();
    this.stages.stop();
    for (const u of this.unsubscribers) u();
  }

  private stageApps(stage: KubeObject): { name: string; namespace: string }[] {
    try {
      const parsed = JSON.parse(stage.metadata.annotations?.[ARGOCD_CONTEXT_ANNOTATION] ?? '[]') as { name: string; namespace?: string }[];
      return parsed.map((a) => ({ name: a.name, namespace: a.namespace ?? 'argocd' }));
    } catch {
      return [];
    }
  }

  private freightRef(promo: KubeObject): Record<string, unknown> | undefined {
    const f = this.options.store.tryGet(this.freightRt, promo.metadata.namespace, promo.spec.freight);
    if (!f) return undefined;
    return { name: f.metadata.name, origin: f.origin, ...(f.images ? { images: f.images } : {}), ...(f.commits ? { commits: f.commits } : {}) };
  }

  private reconcilePromotion(key: ObjectKey): void {
    const { store, clock } = this.options;
    const promo = store.tryGet(this.promoRt, key.namespace, key.name);
    if (!promo) return;
    const status: Record<string, any> = structuredClone(promo.status ?? {}); // eslint-disable-line @typescript-eslint/no-explicit-any
    if (TERMINAL.includes(status.phase)) return;
    const now = clock.now();
    const nowIso = isoSeconds(now);
    const id = `${key.namespace}/${key.name}`;
    const steps: { uses?: string; as?: string; config?: Record<string, unknown> }[] = promo.spec?.steps ?? [];
    const stage = store.tryGet(this.stageRt, key.namespace, promo.spec.stage);
    let wakeAt: number | undefined;

    if (promo.metadata.annotations?.[ABORT_ANNOTATION] !== undefined) {
      const meta = status.stepExecutionMetadata ?? [];
      const current = meta[status.currentStep ?? 0];
      if (current && current.status === 'Running') Object.assign(current, { status: 'Aborted', finishedAt: nowIso });
      Object.assign(status, { phase: 'Aborted', message: 'Promotion aborted by user', finishedAt: nowIso, stepExecutionMetadata: meta });
    } else if (!status.phase) {
      status.phase = 'Pending';
    } else if (status.phase === 'Pending') {
      const current = stage?.status?.currentPromotion?.name;
      const queue = store
        .list(this.promoRt, key.namespace, { labelSelector: `${STAGE_LABEL}=${promo.spec.stage}` })
        .items.filter((p) => !TERMINAL.includes(p.status?.phase ?? ''))
        .map((p) => p.metadata.name)
        .sort((a, b) => (a.split('.')[1] ?? '').localeCompare(b.split('.')[1] ?? ''));
      if (stage && !current && queue[0] === promo.metadata.name) {
        const freight = this.freightRef(promo);
        store.mutate(this.stageRt, key.namespace, promo.spec.stage, (s) => {
          s.status = { ...s.status, currentPromotion: { name: promo.metadata.name, ...(freight ? { freight } : {}) } };
        }, { subresource: 'status' });
        Object.assign(status, { phase: 'Running', startedAt: nowIso, currentStep: 0, ...(freight ? { freight } : {}) });
        status.stepExecutionMetadata = [{ alias: steps[0]?.as ?? 'step-1', startedAt: nowIso, status: 'Running' }];
        this.stepStarted.set(id, now);
        wakeAt = now + (this.options.stepDurationMs ?? 2000);
      }
    } else if (status.phase === 'Running') {
      const started = this.stepStarted.get(id) ?? now;
      this.stepStarted.set(id, started);
      const due = started + (this.options.stepDurationMs ?? 2000);
      if (now < due) wakeAt = due;
      else {
        const i: number = status.currentStep ?? 0;
        const step = steps[i];
        const meta = status.stepExecutionMetadata ?? [];
        const planned = this.faults.fail?.(promo);
        const failsHere = planned && (planned.atStep === undefined ? i + 1 === steps.length : planned.atStep === (step?.as ?? `step-${i + 1}`));
        if (step?.uses === 'argocd-update' && !failsHere) this.runArgoCdUpdate(promo, step.config ?? {});
        Object.assign(meta[i] ?? (meta[i] = { alias: step?.as ?? `step-${i + 1}`, startedAt: nowIso }), { status: 'Succeeded', finishedAt: nowIso });
        if (failsHere && planned) {
          Object.assign(meta[i], { status: planned.phase, message: planned.message, errorCount: 1 });
          Object.assign(status, { phase: planned.phase, message: planned.message, finishedAt: nowIso });
        } else if (i + 1 < steps.length) {
          status.currentStep = i + 1;
          meta[i + 1] = { alias: steps[i + 1]?.as ?? `step-${i + 2}`, startedAt: nowIso, status: 'Running' };
          this.stepStarted.set(id, now);
          wakeAt = now + (this.options.stepDurationMs ?? 2000);
        } else {
          const freight = status.freight ?? this.freightRef(promo);
          const origin = freight?.origin as { kind: string; name: string } | undefined;
          status.freightCollection = { id: promo.spec.freight, items: origin ? { [`${origin.kind}/${origin.name}`]: freight } : {} };
          Object.assign(status, { phase: 'Succeeded', finishedAt: nowIso });
        }
        status.stepExecutionMetadata = meta;
      }
    }
    const written = store.mutate(this.promoRt, key.namespace, key.name, (p) => void (p.status = status), { subresource: 'status' });
    if (wakeAt !== undefined) this.promotions.requeueAt(key, wakeAt);
    if (TERMINAL.includes(status.phase)) {
      this.stepStarted.delete(id);
      this.finish(written);
    }
  }

  /** Syncs the Applications an `argocd-update` step names, and remembers them on the Stage. */
  private runArgoCdUpdate(promo: KubeObject, config: Record<string, unknown>): void {
    const apps = (config.apps as { name: string; namespace?: string }[] | undefined) ?? [];
    const appRt = this.argocd.registry.byKind('Application', 'argoproj.io');
    for (const a of apps) {
      if (!this.argocd.tryGet(appRt, a.namespace ?? 'argocd', a.name)) continue;
      this.argocd.mutate(appRt, a.namespace ?? 'argocd', a.name, (app) => {
        app.operation = { initiatedBy: { username: 'kargo-controller', automated: true }, info: [{ name: 'Reason', value: `Promotion ${promo.metadata.name}` }], sync: {} };
      });
    }
    if (apps.length > 0) {
      this.options.store.mutate(this.stageRt, promo.metadata.namespace, promo.spec.stage, (s) => {
        s.metadata.annotations = { ...s.metadata.annotations, [ARGOCD_CONTEXT_ANNOTATION]: JSON.stringify(apps.map((a) => ({ name: a.name, namespace: a.namespace ?? 'argocd' }))) };
      });
    }
  }

  private finish(promo: KubeObject): void {
    const { store, clock } = this.options;
    const nowIso = isoSeconds(clock.now());
    const ns = promo.metadata.namespace;
    const stageName = promo.spec.stage;
    const stage = store.tryGet(this.stageRt, ns, stageName);
    if (stage) {
      store.mutate(this.stageRt, ns, stageName, (s) => {
        const st = { ...s.status };
        if (st.currentPromotion?.name === promo.metadata.name) delete st.currentPromotion;
        st.lastPromotion = { name: promo.metadata.name, ...(promo.status.freight ? { freight: promo.status.freight } : {}), status: promo.status, finishedAt: nowIso };
        if (promo.status.phase === 'Succeeded') {
          st.freightHistory = [promo.status.freightCollection, ...(st.freightHistory ?? [])].slice(0, 10);
          st.freightSummary = promo.spec.freight;
        }
        s.status = st;
      }, { subresource: 'status' });
      if (promo.status.phase === 'Succeeded') {
        const freight = store.tryGet(this.freightRt, ns, promo.spec.freight);
        if (freight) {
          store.mutate(this.freightRt, ns, promo.spec.freight, (f) => {
            f.status = { ...f.status, currentlyIn: { ...f.status?.currentlyIn, [stageName]: { since: nowIso } } };
          }, { subresource: 'status' });
        }
      }
    }
    store.create(this.eventRt, ns, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: '',
        generateName: `${promo.metadata.name}.`,
        annotations: { 'event.kargo.akuity.io/promotion-name': promo.metadata.name, 'event.kargo.akuity.io/stage-name': stageName, 'event.kargo.akuity.io/freight-name': promo.spec.freight },
      },
      involvedObject: { apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Promotion', namespace: ns, name: promo.metadata.name, uid: promo.metadata.uid },
      reason: `Promotion${promo.status.phase}`,
      message: promo.status.message ?? `Promotion ${promo.status.phase.toLowerCase()}`,
      type: 'Normal',
      source: { component: 'kargo-controller' },
      firstTimestamp: nowIso,
      lastTimestamp: nowIso,
      count: 1,
    });
    // The next queued Promotion for this Stage may start now.
    for (const p of store.list(this.promoRt, ns, { labelSelector: `${STAGE_LABEL}=${stageName}` }).items) {
      if (p.status?.phase === 'Pending') this.promotions.add({ namespace: ns, name: p.metadata.name });
    }
  }

  private reconcileStage(key: ObjectKey): void {
    const { store, clock } = this.options;
    if (!key.name) return;
    const stage = store.tryGet(this.stageRt, key.namespace, key.name);
    if (!stage) return;
    const nowIso = isoSeconds(clock.now());
    const status = structuredClone(stage.status ?? {});
    const appRt = this.argocd.registry.byKind('Application', 'argoproj.io');
    const apps = this.stageApps(stage).map((a) => this.argocd.tryGet(appRt, a.namespace, a.name));
    const last = status.lastPromotion?.status?.phase as string | undefined;
    let health: string;
    let reason: string;
    if (status.currentPromotion) [health, reason] = ['Unknown', 'ActivePromotion'];
    else if (!status.lastPromotion) [health, reason] = ['Unknown', 'NoFreight'];
    else if (last !== 'Succeeded') [health, reason] = ['Unknown', `LastPromotion${last}`];
    else {
      health = apps.reduce<string>((worst, app) => {
        const h = app ? (APP_TO_STAGE_HEALTH[app.status?.health?.status ?? 'Unknown'] ?? 'Unknown') : 'Unknown';
        return HEALTH_SEVERITY.indexOf(h) > HEALTH_SEVERITY.indexOf(worst) ? h : worst;
      }, 'Healthy');
      reason = health === 'Healthy' ? 'Healthy' : health === 'Unhealthy' ? 'Unhealthy' : health;
    }
    status.health = {
      status: health,
      ...(apps.length > 0
        ? { output: { applicationStatuses: apps.filter(Boolean).map((a) => ({ namespace: a!.metadata.namespace, name: a!.metadata.name, health: a!.status?.health, sync: a!.status?.sync })) } }
        : {}),
    };
    let conditions: Condition[] = status.conditions ?? [];
    if (status.currentPromotion) {
      conditions = setCondition(conditions, { type: 'Promoting', status: 'True', reason: 'ActivePromotion', message: `Promotion "${status.currentPromotion.name}" is currently Running` }, nowIso);
    } else conditions = conditions.filter((c) => c.type !== 'Promoting');
    const healthy = health === 'Healthy';
    conditions = setCondition(conditions, {
      type: 'Healthy',
      status: healthy ? 'True' : health === 'Unhealthy' ? 'False' : 'Unknown',
      reason,
      message: healthy ? `Stage is healthy (performed ${apps.length} health checks)` : `Stage health is ${health}`,
    }, nowIso);
    const freightName: string | undefined = status.lastPromotion?.freight?.name;
    let verified = false;
    const verification = last === 'Succeeded' ? advanceVerification(stage, status, healthy, clock.now(), this.options.stepDurationMs ?? 2000, this.faults.verify) : { verified: false };
    if (verification.wakeAt !== undefined) this.stages.requeueAt(key, verification.wakeAt);
    if (verification.verified && last === 'Succeeded' && freightName) {
      const freight = store.tryGet(this.freightRt, key.namespace, freightName);
      verified = true;
      if (freight && !freight.status?.verifiedIn?.[key.name]) {
        store.mutate(this.freightRt, key.namespace, freightName, (f) => {
          f.status = { ...f.status, verifiedIn: { ...f.status?.verifiedIn, [key.name]: { verifiedAt: nowIso } } };
        }, { subresource: 'status' });
      }
    }
    if (freightName) {
      const v = store.tryGet(this.freightRt, key.namespace, freightName)?.status?.verifiedIn?.[key.name];
      verified = verified || v !== undefined;
    }
    conditions = setCondition(conditions, { type: 'Verified', status: verified ? 'True' : 'Unknown', reason: verified ? 'Verified' : freightName ? 'VerificationPending' : 'NoFreight', message: verified ? 'Freight has been verified' : 'Verification pending' }, nowIso);
    const ready = status.currentPromotion
      ? { status: 'False', reason: 'ActivePromotion', message: `Promotion "${status.currentPromotion.name}" is currently Running` }
      : last && last !== 'Succeeded'
        ? { status: 'False', reason: `LastPromotion${last}`, message: status.lastPromotion.status?.message ?? '' }
        : !healthy
          ? { status: 'False', reason, message: `Stage health is ${health}` }
          : verified
            ? { status: 'True', reason: 'Verified', message: 'Stage is ready' }
            : { status: 'False', reason: 'VerificationPending', message: 'Verification pending' };
    conditions = setCondition(conditions, { type: 'Ready', ...ready }, nowIso);
    status.conditions = conditions;
    status.observedGeneration = stage.metadata.generation;
    store.mutate(this.stageRt, key.namespace, key.name, (s) => void (s.status = status), { subresource: 'status' });
  }
}
