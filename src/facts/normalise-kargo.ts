/**
 * Kargo objects (parsed with their one model schema) into facts. A Stage observation is about one
 * Freight: its current Promotion's, else its last Promotion's, else the Freight it holds
 * (`freightHistory[0]`); a target-aware Stage (Kargo main, `spec.targets`) reports through
 * `currentPromotionRequest` / `lastPromotionRequest`, which name their Freight only, so what the
 * Freight carries comes from the watch's own view of the project's Freight (`lookup`).
 */
import type { FreightReference, Freight } from '../model/kargo-freight.js';
import { CREATE_ACTOR_ANNOTATION, type Promotion, type PromotionStatus } from '../model/kargo-promotion.js';
import type { Stage } from '../model/kargo-stage.js';
import { cutCodePoints } from '../model/unicode.js';
import type { FactSource, TargetRef } from './fact.js';
import type {
  KargoFreightFact,
  KargoFreightRef,
  KargoPromotionFact,
  KargoPromotionState,
  KargoStageFact,
  KargoVerificationState,
} from './kargo-fact.js';

const MAX_IMAGES = 32;
const MAX_COMMITS = 5;
const MAX_ANNOTATIONS = 64;
const MAX_MESSAGE = 2_000;
const RUNNING = 'Running';

/** What the watch knows of a project beyond the object at hand (the Freight by name, a Stage's labels). */
export interface KargoLookup {
  freight(namespace: string, name: string): KargoFreightRef | undefined;
  stageLabels(namespace: string, name: string): Record<string, string> | undefined;
}

const bounded = (text: string | undefined, max = MAX_MESSAGE): string | undefined => (text ? cutCodePoints(text, max) : undefined);

function imageRef(image: { repoURL: string; tag?: string; digest?: string }): string {
  if (image.tag) return `${image.repoURL}:${image.tag}`;
  if (image.digest) return `${image.repoURL}@${image.digest}`;
  return image.repoURL;
}

/** A FreightReference (or a Freight, whose fields are top level) as the fact carries it. */
export function freightRefOf(ref: Pick<FreightReference, 'origin' | 'images' | 'commits'> & { name?: string }, alias?: string): KargoFreightRef | undefined {
  if (!ref.name) return undefined;
  const images = [...(ref.images ?? [])].sort((a, b) => imageRef(a).localeCompare(imageRef(b))).slice(0, MAX_IMAGES);
  const annotations: Record<string, string> = {};
  for (const image of images) {
    for (const [k, v] of Object.entries(image.annotations)) {
      if (Object.keys(annotations).length >= MAX_ANNOTATIONS) break;
      if (!(k in annotations)) annotations[k] = cutCodePoints(v, 1024);
    }
  }
  const digests = images.length > 0 && images.every((i) => i.digest) ? images.map((i) => `${i.repoURL}@${i.digest}`).sort() : [];
  return {
    name: ref.name,
    ...(alias ? { alias: cutCodePoints(alias, 253) } : {}),
    ...(ref.origin?.name ? { warehouse: cutCodePoints(ref.origin.name, 253) } : {}),
    images: images.map(imageRef),
    digests,
    annotations,
    commits: (ref.commits ?? []).slice(0, MAX_COMMITS).map((c) => ({ ...(c.repoURL ? { repoURL: c.repoURL } : {}), ...(c.id ? { id: c.id } : {}), ...(c.tag ? { tag: c.tag } : {}) })),
    resolved: true,
  };
}

/** The Freight `name` in `namespace`: what a reference says, else what the watch knows, else the name alone. */
function freightNamed(namespace: string, name: string | undefined, ref: FreightReference | undefined, lookup: KargoLookup | undefined): KargoFreightRef | undefined {
  if (!name) return undefined;
  const known = lookup?.freight(namespace, name);
  const fromRef = ref && (ref.images?.length || ref.commits?.length || ref.origin) ? freightRefOf({ ...ref, name }, known?.alias) : undefined;
  return fromRef ?? known ?? { name, images: [], digests: [], annotations: {}, commits: [], resolved: false };
}

/** The step that failed, from the status's step metadata (its alias and message), when one did. */
function failedStep(status: PromotionStatus | undefined): KargoPromotionState['failedStep'] {
  const steps = status?.stepExecutionMetadata ?? [];
  const failed = [...steps].reverse().find((s) => s.status === 'Failed' || s.status === 'Errored');
  if (!failed) return undefined;
  const index = steps.indexOf(failed);
  return { alias: cutCodePoints(failed.alias ?? `step-${index + 1}`, 253), ...(failed.message ? { message: bounded(failed.message) } : {}) };
}

function promotionState(name: string, status: PromotionStatus | undefined, extra: Partial<KargoPromotionState> = {}): KargoPromotionState {
  const step = failedStep(status);
  const phase = extra.phase ?? status?.phase ?? '';
  const current = status?.currentStep;
  const running = phase === RUNNING && current !== undefined ? status?.stepExecutionMetadata?.[current] : undefined;
  return {
    name,
    via: 'Promotion',
    phase,
    ...(status?.message ? { message: bounded(status.message) } : {}),
    ...(step ? { failedStep: step } : {}),
    ...(phase === RUNNING && current !== undefined ? { step: { number: current + 1, ...(running?.alias ? { alias: cutCodePoints(running.alias, 253) } : {}) } } : {}),
    ...(status?.startedAt ? { startedAt: status.startedAt } : {}),
    ...(status?.finishedAt ? { finishedAt: status.finishedAt } : {}),
    ...extra,
  };
}

function firstItem(collection: { items?: Record<string, FreightReference> } | undefined): FreightReference | undefined {
  return Object.values(collection?.items ?? {})[0];
}

/** Which Promotion the Stage is at, and the Freight it is about. */
function aboutOf(stage: Stage, lookup: KargoLookup | undefined): { promotion?: KargoPromotionState; freight?: KargoFreightRef } {
  const ns = stage.metadata.namespace;
  const status = stage.status;
  const targetAware = (stage.spec?.targets?.selectors?.length ?? 0) > 0;
  if (targetAware) {
    const current = status?.currentPromotionRequest?.name ? status.currentPromotionRequest : undefined;
    const request = current ?? (status?.lastPromotionRequest?.name ? status.lastPromotionRequest : undefined);
    if (request?.name) {
      const promotion: KargoPromotionState = {
        name: request.name,
        via: 'PromotionRequest',
        phase: request.phase ?? (current ? RUNNING : ''),
        ...(request.finishedAt ? { finishedAt: request.finishedAt } : {}),
      };
      return { promotion, freight: freightNamed(ns, request.freight?.name, undefined, lookup) };
    }
  }
  const current = status?.currentPromotion;
  if (current?.name) {
    return { promotion: promotionState(current.name, undefined, { phase: RUNNING }), freight: freightNamed(ns, current.freight?.name, current.freight, lookup) };
  }
  const last = status?.lastPromotion;
  if (last?.name) {
    const promotion = promotionState(last.name, last.status, last.finishedAt && !last.status?.finishedAt ? { finishedAt: last.finishedAt } : {});
    return { promotion, freight: freightNamed(ns, last.freight?.name, last.freight, lookup) };
  }
  const held = firstItem(status?.freightHistory?.[0]);
  return { freight: freightNamed(ns, held?.name, held, lookup) };
}

export function normaliseKargoStage(stage: Stage, cluster: string, receivedAt: number, event: string, lookup?: KargoLookup, source: FactSource = 'watch'): KargoStageFact {
  const { metadata, status } = stage;
  const about = aboutOf(stage, lookup);
  const held = status?.freightHistory?.[0];
  const heldName = firstItem(held)?.name ?? undefined;
  const newest = held?.verificationHistory?.[0];
  const verification: KargoVerificationState | undefined =
    newest && about.freight && heldName === about.freight.name
      ? {
          phase: newest.phase ?? 'Pending',
          ...(newest.id ? { id: newest.id } : {}),
          ...(newest.message ? { message: bounded(newest.message) } : {}),
          ...(newest.analysisRun?.name ? { analysisRun: newest.analysisRun.name } : {}),
          ...(newest.startTime ? { startTime: newest.startTime } : {}),
          ...(newest.finishTime ? { finishTime: newest.finishTime } : {}),
        }
      : undefined;
  const healthy = status?.conditions?.find((c) => c.type === 'Healthy');
  const target: TargetRef = { kind: 'KargoStage', cluster, namespace: metadata.namespace, name: metadata.name };
  return {
    kind: 'kargo-stage',
    source,
    event,
    sentAt: Math.floor(receivedAt / 1000),
    receivedAt,
    target,
    stage: {
      ...(metadata.uid ? { uid: metadata.uid } : {}),
      ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
      resourceVersion: metadata.resourceVersion,
      labels: metadata.labels,
      targetAware: (stage.spec?.targets?.selectors?.length ?? 0) > 0,
      verificationConfigured: (stage.spec?.verification?.analysisTemplates?.length ?? 0) > 0,
      ...(status?.health?.status ? { health: status.health.status } : {}),
      ...(healthy && healthy.status !== 'True' && (healthy.reason || healthy.message) ? { healthReason: bounded(healthy.message ?? healthy.reason ?? undefined, 500) } : {}),
      ...(about.freight ? { freight: about.freight } : {}),
      ...(heldName ? { currentFreight: heldName } : {}),
      ...(about.promotion ? { promotion: about.promotion } : {}),
      ...(verification ? { verification } : {}),
    },
  };
}

export function normaliseKargoPromotion(promotion: Promotion, cluster: string, receivedAt: number, event: string, lookup?: KargoLookup, source: FactSource = 'watch'): KargoPromotionFact {
  const { metadata, spec, status } = promotion;
  const actor = metadata.annotations[CREATE_ACTOR_ANNOTATION];
  const state = promotionState(metadata.name, status, { resourceVersion: metadata.resourceVersion, ...(actor ? { actor: cutCodePoints(actor, 253) } : {}) });
  if (state.step && spec.steps) state.step.count = spec.steps.length;
  const freight = freightNamed(metadata.namespace, spec.freight ?? status?.freight?.name, status?.freight, lookup);
  const stageLabels = lookup?.stageLabels(metadata.namespace, spec.stage);
  return {
    kind: 'kargo-promotion',
    source,
    event,
    sentAt: Math.floor(receivedAt / 1000),
    receivedAt,
    target: { kind: 'KargoStage', cluster, namespace: metadata.namespace, name: spec.stage },
    ...(stageLabels ? { stageLabels } : {}),
    ...(metadata.uid ? { uid: metadata.uid } : {}),
    promotion: state,
    ...(freight ? { freight } : {}),
  };
}

export function normaliseKargoFreight(freight: Freight, cluster: string, receivedAt: number, event: string, source: FactSource = 'watch'): KargoFreightFact {
  const ref = freightRefOf({ ...freight, name: freight.metadata.name }, freight.alias ?? freight.metadata.labels['kargo.akuity.io/alias']) as KargoFreightRef;
  return {
    kind: 'kargo-freight',
    source,
    event,
    sentAt: Math.floor(receivedAt / 1000),
    receivedAt,
    cluster,
    namespace: freight.metadata.namespace,
    ...(freight.metadata.uid ? { uid: freight.metadata.uid } : {}),
    resourceVersion: freight.metadata.resourceVersion,
    freight: ref,
  };
}
