/**
 * Kargo's Promotion webhooks, as admission hooks on the stand-in: the mutating one names the
 * Promotion `<stage>.<ulid>.<first 7 of freight>`, labels and annotates it, owns it by its Stage and
 * copies the Stage's promotion steps; the validating one requires the custom verb `promote` on the
 * Stage (a SubjectAccessReview), Freight available to the Stage, and an immutable spec; and (Kargo
 * main) no Promotion created directly for a target-aware Stage, only a PromotionRequest's children.
 */
import type { AccessRequest } from '../auth.js';
import { ApiError } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { AdmissionRequest, ObjectStore } from '../store.js';
import { ulid } from './ulid.js';

export const STAGE_LABEL = 'kargo.akuity.io/stage';
export const ABORT_ANNOTATION = 'kargo.akuity.io/abort';

function denied(message: string, code = 403, reason = 'Forbidden'): ApiError {
  return new ApiError(code, reason, `admission webhook "promotion.kargo.akuity.io" denied the request: ${message}`);
}

/** Freight is available to a Stage that requests its origin directly, or once verified in (or approved for) an upstream Stage. */
export function freightAvailable(stage: KubeObject, freight: KubeObject): boolean {
  const origin = freight.origin as { kind?: string; name?: string } | undefined;
  if (freight.status?.approvedFor?.[stage.metadata.name]) return true;
  return (stage.spec?.requestedFreight ?? []).some(
    (r: { origin?: { kind: string; name: string }; sources?: { direct?: boolean; stages?: string[] } }) =>
      r.origin?.kind === origin?.kind &&
      r.origin?.name === origin?.name &&
      (r.sources?.direct === true || (r.sources?.stages ?? []).some((s) => freight.status?.verifiedIn?.[s] !== undefined)),
  );
}

/** Kargo's `isPromotionRequestChild`: its controller owner is a PromotionRequest. */
export function isPromotionRequestChild(promo: KubeObject): boolean {
  const owner = (promo.metadata.ownerReferences ?? []).find((o: { controller?: boolean }) => o.controller === true) as { apiVersion?: string; kind?: string } | undefined;
  return owner?.apiVersion === 'kargo.akuity.io/v1alpha1' && owner.kind === 'PromotionRequest';
}

export function installKargoAdmission(store: ObjectStore, can: (request: AccessRequest) => boolean): void {
  const stages = store.registry.byKind('Stage', 'kargo.akuity.io');
  const freights = store.registry.byKind('Freight', 'kargo.akuity.io');
  const promotions = store.registry.byKind('Promotion', 'kargo.akuity.io');
  store.addAdmissionHook(promotions, (req: AdmissionRequest) => {
    const promo = req.object;
    const ns = promo.metadata.namespace;
    const stageName: string | undefined = promo.spec?.stage;
    if (req.operation === 'UPDATE' && req.subresource === undefined && JSON.stringify(req.old?.spec) !== JSON.stringify(promo.spec)) {
      throw denied('spec is immutable', 422, 'Invalid');
    }
    if (req.user !== undefined && stageName && req.subresource === undefined) {
      if (!can({ user: req.user, ...(req.groups ? { groups: req.groups } : {}), verb: 'promote', group: 'kargo.akuity.io', resource: 'stages', namespace: ns, name: stageName })) {
        throw denied(`subject "${req.user}" is not permitted to promote to Stage "${stageName}" (missing "promote" on stages.kargo.akuity.io/${stageName})`);
      }
    }
    if (req.operation !== 'CREATE' || !stageName) return;
    const stage = store.tryGet(stages, ns, stageName);
    if (!stage) throw denied(`Stage "${stageName}" not found in namespace "${ns}"`, 404, 'NotFound');
    // Kargo main: only a PromotionRequest's child may name a Target, and a target-aware Stage is promoted only through one.
    const child = isPromotionRequestChild(promo);
    if (promo.spec?.target && !child) throw denied(`spec.target: Invalid value: "${promo.spec.target}": a Promotion may name a Target only when created by a PromotionRequest`, 422, 'Invalid');
    if (stage.spec?.targets !== undefined && !child) {
      throw denied(`spec.stage: Invalid value: "${stageName}": Stage "${stageName}" selects Targets; it is promoted to with a PromotionRequest rather than a Promotion`, 422, 'Invalid');
    }
    const steps = stage.spec?.promotionTemplate?.spec?.steps ?? [];
    if (steps.length === 0) throw denied(`Stage "${stageName}" defines no promotion steps`, 400, 'BadRequest');
    const freightName: string | undefined = promo.spec?.freight;
    const freight = freightName ? store.tryGet(freights, ns, freightName) : undefined;
    if (!freight) throw denied(`Freight "${freightName}" not found in namespace "${ns}"`, 404, 'NotFound');
    if (!freightAvailable(stage, freight)) throw denied('Freight is not available to this Stage', 403, 'Forbidden');
    // A child is named `<stage>.<target>.<ulid>.<hash>` by its PromotionRequest (kargo-requests.ts).
    if (!child || !promo.metadata.name) promo.metadata.name = `${stageName}.${ulid(store.clock.now())}.${freightName!.slice(0, 7)}`.toLowerCase();
    delete promo.metadata.generateName;
    promo.metadata.labels = { ...promo.metadata.labels, [STAGE_LABEL]: stageName };
    promo.metadata.annotations = {
      ...promo.metadata.annotations,
      [STAGE_LABEL]: stageName,
      'kargo.akuity.io/create-actor': req.user === undefined ? 'controller:kargo-controller' : `kubernetes:${req.user}`,
    };
    if (!child) promo.metadata.ownerReferences = [{ apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Stage', name: stageName, uid: stage.metadata.uid!, controller: true, blockOwnerDeletion: true }];
    promo.spec = { ...promo.spec, steps: structuredClone(steps), vars: [...(stage.spec?.vars ?? []), ...(stage.spec?.promotionTemplate?.spec?.vars ?? [])] };
    if (promo.spec.vars.length === 0) delete promo.spec.vars;
  });
}
