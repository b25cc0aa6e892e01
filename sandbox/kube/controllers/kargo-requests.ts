/**
 * Kargo's PromotionRequest reconciler, simulated (Kargo main / 1.12, target-aware Stages): a
 * PromotionRequest fans its Freight out to the Targets in its `spec.targets` as child Promotions
 * named `<stage>.<target>.<ulid>.<freight7>` (Kargo's GenerateChildPromotionName), owned by the
 * request and naming their Target. The children run like any Promotion (the Kargo controller
 * simulator, kargo.ts); this one sums their phases into the request's `status.targets`, `summary`
 * and `phase` (Pending → Running → Succeeded, or Failed / Errored once every child ended and one
 * did not succeed), and mirrors the request on its Stage as `status.currentPromotionRequest`
 * while it runs and `lastPromotionRequest` once it ended.
 *
 * Also the Kargo API server's half (kargo-api-server.ts): which Targets a Stage governs now, and a
 * new PromotionRequest for it, created by Kargo's own identity.
 */
import { isoSeconds, type Clock } from '../clock.js';
import type { ParsedSelector, SelectorOperator } from '../label-selector.js';
import { selectorMatches } from '../label-selector.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import { STAGE_LABEL } from './kargo-admission.js';
import { ulid } from './ulid.js';
import { WorkQueue, type ObjectKey } from './work-queue.js';

const API_VERSION = 'kargo.akuity.io/v1alpha1';
const TERMINAL = ['Succeeded', 'Failed', 'Errored', 'Aborted'];

type LabelSelectorObject = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: SelectorOperator; values?: string[] }[] };

function asParsed(selector: LabelSelectorObject): ParsedSelector {
  return {
    requirements: [
      ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In' as const, values: [value] })),
      ...(selector.matchExpressions ?? []).map((e) => ({ key: e.key, operator: e.operator, values: e.values ?? [] })),
    ],
  };
}

/** The Targets a Stage governs now: any of its selectors matches (an empty selector matches every Target), sorted by name. */
export function targetsOfStage(store: ObjectStore, stage: KubeObject): KubeObject[] {
  const selectors = ((stage.spec?.targets?.selectors ?? []) as LabelSelectorObject[]).map(asParsed);
  const targets = store.list(store.registry.byKind('Target', 'kargo.akuity.io'), stage.metadata.namespace).items;
  return targets.filter((t) => selectors.some((s) => selectorMatches(s, t.metadata.labels))).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** Kargo's NewPromotionRequest: the Targets resolved once, named like a Promotion, owned by the Stage; created by Kargo itself. */
export function createPromotionRequest(store: ObjectStore, stage: KubeObject, freight: string, actor: string): KubeObject {
  const rt = store.registry.byKind('PromotionRequest', 'kargo.akuity.io');
  const name = stage.metadata.name;
  return store.create(rt, stage.metadata.namespace, {
    apiVersion: API_VERSION,
    kind: 'PromotionRequest',
    metadata: {
      name: `${name}.${ulid(store.clock.now())}.${freight.slice(0, 7)}`.toLowerCase(),
      labels: { [STAGE_LABEL]: name },
      annotations: { 'kargo.akuity.io/create-actor': actor },
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Stage', name, uid: stage.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: { stage: name, freight, targets: targetsOfStage(store, stage).map((t) => ({ name: t.metadata.name })) },
  });
}

export interface KargoRequestControllerOptions {
  store: ObjectStore;
  clock: Clock;
}

export class KargoRequestController {
  private readonly queue: WorkQueue;
  private readonly requestRt: ResourceType;
  private readonly promoRt: ResourceType;
  private readonly stageRt: ResourceType;

  constructor(private readonly options: KargoRequestControllerOptions) {
    const r = options.store.registry;
    this.requestRt = r.byKind('PromotionRequest', 'kargo.akuity.io');
    this.promoRt = r.byKind('Promotion', 'kargo.akuity.io');
    this.stageRt = r.byKind('Stage', 'kargo.akuity.io');
    this.queue = new WorkQueue(options.clock, (k) => this.reconcile(k));
  }

  start(): this {
    const { store } = this.options;
    // A child's change wakes its PromotionRequest.
    this.queue.watch(store, [this.requestRt, this.promoRt], (e: StoreEvent) => {
      if (e.rt === this.requestRt) return [{ namespace: e.object.metadata.namespace, name: e.object.metadata.name }];
      const owner = (e.object.metadata.ownerReferences ?? []).find((o: { kind?: string; controller?: boolean }) => o.kind === 'PromotionRequest' && o.controller);
      return owner ? [{ namespace: e.object.metadata.namespace, name: owner.name }] : [];
    });
    for (const pr of store.list(this.requestRt, undefined).items) this.queue.add({ namespace: pr.metadata.namespace, name: pr.metadata.name });
    return this;
  }

  stop(): void {
    this.queue.stop();
  }

  private children(request: KubeObject): KubeObject[] {
    return this.options.store
      .list(this.promoRt, request.metadata.namespace, { labelSelector: `${STAGE_LABEL}=${request.spec.stage}` })
      .items.filter((p) => (p.metadata.ownerReferences ?? []).some((o: { kind?: string; uid?: string }) => o.kind === 'PromotionRequest' && o.uid === request.metadata.uid));
  }

  private reconcile(key: ObjectKey): void {
    const { store, clock } = this.options;
    const request = store.tryGet(this.requestRt, key.namespace, key.name);
    if (!request) return;
    const status: Record<string, any> = structuredClone(request.status ?? {}); // eslint-disable-line @typescript-eslint/no-explicit-any
    if (['Succeeded', 'Failed', 'Errored'].includes(status.phase)) return;
    const nowIso = isoSeconds(clock.now());
    const ns = request.metadata.namespace!;
    const targets: string[] = (request.spec.targets ?? []).map((t: { name: string }) => t.name);
    if (!status.phase) {
      Object.assign(status, { phase: 'Pending', startedAt: nowIso });
    } else {
      const children = this.children(request);
      for (const target of targets) {
        if (children.some((c) => c.spec.target === target)) continue;
        children.push(
          store.create(this.promoRt, ns, {
            apiVersion: API_VERSION,
            kind: 'Promotion',
            metadata: {
              name: `${request.spec.stage}.${target}.${ulid(clock.now())}.${request.spec.freight.slice(0, 7)}`.toLowerCase(),
              ownerReferences: [{ apiVersion: API_VERSION, kind: 'PromotionRequest', name: request.metadata.name, uid: request.metadata.uid!, controller: true, blockOwnerDeletion: true }],
            },
            spec: { stage: request.spec.stage, freight: request.spec.freight, target },
          }),
        );
      }
      const phases = targets.map((target) => {
        const child = children.find((c) => c.spec.target === target);
        return { name: target, ...(child ? { promotion: child.metadata.name, phase: child.status?.phase ?? 'Pending' } : {}) };
      });
      const count = (phase: string) => phases.filter((p) => p.phase === phase).length;
      status.targets = phases;
      status.summary = Object.fromEntries(['Pending', 'Running', 'Succeeded', 'Failed', 'Errored', 'Aborted'].map((p) => [p.toLowerCase(), count(p)]).filter(([, n]) => n !== 0));
      const ended = phases.every((p) => TERMINAL.includes(p.phase ?? ''));
      if (!ended) status.phase = 'Running';
      else {
        status.phase = count('Succeeded') === phases.length ? 'Succeeded' : count('Errored') > 0 ? 'Errored' : 'Failed';
        status.finishedAt = nowIso;
      }
    }
    status.observedGeneration = request.metadata.generation;
    const written = store.mutate(this.requestRt, ns, key.name, (r) => void (r.status = status), { subresource: 'status' });
    this.mirrorOnStage(written);
    // Pending moves on to Running in its own pass, as a reconciler that requeues would.
    if (status.phase === 'Pending') this.queue.add(key);
  }

  /** The Stage's view: current while the request runs, last once it ended. */
  private mirrorOnStage(request: KubeObject): void {
    const { store } = this.options;
    const ns = request.metadata.namespace!;
    if (!store.tryGet(this.stageRt, ns, request.spec.stage)) return;
    const ref = { name: request.metadata.name, freight: { name: request.spec.freight }, phase: request.status.phase };
    store.mutate(this.stageRt, ns, request.spec.stage, (s) => {
      const st = { ...s.status };
      if (['Succeeded', 'Failed', 'Errored'].includes(request.status.phase)) {
        if (st.currentPromotionRequest?.name === request.metadata.name) delete st.currentPromotionRequest;
        st.lastPromotionRequest = { ...ref, finishedAt: request.status.finishedAt };
      } else st.currentPromotionRequest = ref;
      s.status = st;
    }, { subresource: 'status' });
  }
}
