/**
 * Kargo objects (parsed with their one model schema) into facts. A Stage is read as the model
 * reads it (src/model/kargo-stage-reading.ts, the same reading `/glidepath status` judges): about
 * one Freight, its current Promotion's, else its last Promotion's, else the Freight it holds; a
 * target-aware Stage (Kargo main, `spec.targets`) reports through `currentPromotionRequest` /
 * `lastPromotionRequest`, which name their Freight only, so what the Freight carries comes from
 * the watch's own view of the project's Freight (`lookup`). A PromotionRequest's child Promotion
 * is a fact about its request (the failing Target), not a Promotion of its own.
 */
import type { FreightReference, Freight } from '../model/kargo-freight.js';
import { CREATE_ACTOR_ANNOTATION, type Promotion } from '../model/kargo-promotion.js';
import type { Stage } from '../model/kargo-stage.js';
import { promotionState, readStage } from '../model/kargo-stage-reading.js';
import { cutCodePoints } from '../model/unicode.js';
import type { FactSource, TargetRef } from './fact.js';
import type {
  KargoFreightFact,
  KargoFreightRef,
  KargoPromotionFact,
  KargoPromotionState,
  KargoStageFact,
} from './kargo-fact.js';

const MAX_IMAGES = 32;
const MAX_COMMITS = 5;
const MAX_ANNOTATIONS = 64;

/** What the watch knows of a project beyond the object at hand (the Freight by name, a Stage's labels). */
export interface KargoLookup {
  freight(namespace: string, name: string): KargoFreightRef | undefined;
  stageLabels(namespace: string, name: string): Record<string, string> | undefined;
}

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

export function normaliseKargoStage(stage: Stage, cluster: string, receivedAt: number, event: string, lookup?: KargoLookup, source: FactSource = 'watch'): KargoStageFact {
  const { metadata } = stage;
  const { freight, heldFreight, ...reading } = readStage(stage);
  const about = freight ? freightNamed(metadata.namespace, freight.name, freight.ref, lookup) : undefined;
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
      targetAware: reading.targetAware,
      verificationConfigured: reading.verificationConfigured,
      ...(reading.health ? { health: reading.health } : {}),
      ...(reading.healthReason ? { healthReason: reading.healthReason } : {}),
      ...(about ? { freight: about } : {}),
      ...(heldFreight ? { currentFreight: heldFreight } : {}),
      ...(reading.promotion ? { promotion: reading.promotion } : {}),
      ...(reading.verification ? { verification: reading.verification } : {}),
    },
  };
}

/** The PromotionRequest a child Promotion belongs to (its controller owner), if it is one. */
function requestOf(promotion: Promotion): string | undefined {
  const owner = (promotion.metadata.ownerReferences ?? []).find((o) => o.kind === 'PromotionRequest' && o.controller !== false);
  return owner?.name;
}

/**
 * A PromotionRequest's child Promotion (Kargo main: one per Target of a target-aware Stage) tells
 * about its request, not as a Promotion of the Stage: a running child means its request runs (and
 * opens a release, as a running Promotion does); any other child says nothing of the request's
 * phase ('', which never moves a phase back nor opens a release: its phase comes from the Stage's
 * status). A child that failed or errored names its Target, its own name, the step and the message
 * (what the Stage's view of the request cannot say).
 */
function childState(promotion: Promotion, request: string): KargoPromotionState {
  const own = promotionState(promotion.metadata.name, promotion.status);
  const failed = own.phase === 'Failed' || own.phase === 'Errored';
  return {
    name: request,
    via: 'PromotionRequest',
    phase: own.phase === 'Running' ? 'Running' : '',
    resourceVersion: promotion.metadata.resourceVersion,
    ...(failed
      ? {
          failedTarget: { name: cutCodePoints(promotion.spec.target ?? '?', 253), promotion: promotion.metadata.name, phase: own.phase },
          ...(own.failedStep ? { failedStep: own.failedStep } : {}),
          ...(own.message ? { message: own.message } : {}),
        }
      : {}),
  };
}

export function normaliseKargoPromotion(promotion: Promotion, cluster: string, receivedAt: number, event: string, lookup?: KargoLookup, source: FactSource = 'watch'): KargoPromotionFact {
  const { metadata, spec, status } = promotion;
  const actor = metadata.annotations[CREATE_ACTOR_ANNOTATION];
  const request = requestOf(promotion);
  const state = request
    ? childState(promotion, request)
    : promotionState(metadata.name, status, { resourceVersion: metadata.resourceVersion, ...(actor ? { actor: cutCodePoints(actor, 253) } : {}) });
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
