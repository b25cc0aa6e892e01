/**
 * Stand-in for Kargo's Promotion admission webhooks (notes/kargo.md §1): on create, the name is
 * replaced by `<stage>.<ulid>.<first 7 of freight>` whatever the client sent, the steps are copied
 * from the Stage's promotionTemplate, the Stage becomes the controller owner, and a Promotion for
 * a missing Stage, a control-flow Stage or Freight the Stage may not take is denied.
 * Availability is judged independently of Glidepath's own check, so each can catch the other.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from './errors.js';
import type { KubeObject } from './object.js';
import type { ObjectStore } from './store.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID (48-bit time, 80 random bits, Crockford base32). */
export function ulid(nowMs: number): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[bytes[i]! % 32]!;
  return time + random;
}

function soakedMs(freight: KubeObject, stage: string, now: number): number {
  const verified = freight.status?.verifiedIn?.[stage];
  if (!verified) return -1;
  const since = Date.parse(freight.status?.currentlyIn?.[stage]?.since ?? '');
  const current = Number.isNaN(since) ? 0 : now - since;
  const longest = typeof verified.longestSoak === 'string' ? goDurationMs(verified.longestSoak) : 0;
  return Math.max(current, longest);
}

function goDurationMs(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/([0-9.]+)(h|m|s)/g)) total += Number(m[1]) * { h: 3_600_000, m: 60_000, s: 1000 }[m[2] as 'h' | 'm' | 's'];
  return total;
}

function available(stage: KubeObject, freight: KubeObject, now: number): boolean {
  const name = stage.metadata.name;
  const origin = (freight.origin ?? {}) as { kind?: string; name?: string };
  if (freight.status?.approvedFor?.[name]) return true;
  return (stage.spec?.requestedFreight ?? []).some((req: { origin?: { kind?: string; name?: string }; sources?: Record<string, unknown> }) => {
    if (req.origin?.kind !== origin.kind || req.origin?.name !== origin.name) return false;
    const sources = req.sources ?? {};
    if (sources.direct === true) return true;
    const upstream = (sources.stages as string[] | undefined) ?? [];
    const soak = typeof sources.requiredSoakTime === 'string' ? goDurationMs(sources.requiredSoakTime) : 0;
    const ok = (s: string): boolean => soakedMs(freight, s, now) >= soak;
    return sources.availabilityStrategy === 'All' ? upstream.length > 0 && upstream.every(ok) : upstream.some(ok);
  });
}

export function installKargoWebhooks(store: ObjectStore): void {
  const stages = store.registry.byKind('Stage', 'kargo.akuity.io');
  const freights = store.registry.byKind('Freight', 'kargo.akuity.io');
  store.addAdmissionHook({ group: 'kargo.akuity.io', plural: 'promotions' }, (request) => {
    if (request.operation === 'UPDATE' && request.subresource !== 'status' && JSON.stringify(request.object.spec) !== JSON.stringify(request.old?.spec)) {
      throw new ApiError(403, 'Forbidden', 'admission webhook "promotion.kargo.akuity.io" denied the request: spec is immutable');
    }
    if (request.operation !== 'CREATE') return;
    const promo = request.object;
    const ns = promo.metadata.namespace;
    const stageName: string = promo.spec?.stage ?? '';
    const freightName: string = promo.spec?.freight ?? '';
    const deny = (why: string): never => {
      throw new ApiError(403, 'Forbidden', `admission webhook "promotion.kargo.akuity.io" denied the request: ${why}`);
    };
    const stage = store.tryGet(stages, ns, stageName) ?? deny(`Stage "${stageName}" not found in namespace "${ns}"`);
    const steps = stage.spec?.promotionTemplate?.spec?.steps ?? [];
    if (steps.length === 0) deny(`Stage "${stageName}" defines no promotion steps`);
    const freight = store.tryGet(freights, ns, freightName) ?? deny(`Freight "${freightName}" not found in namespace "${ns}"`);
    if (!available(stage, freight, store.clock.now())) deny('Freight is not available to this Stage');
    promo.metadata.name = `${stageName}.${ulid(store.clock.now())}.${freightName.slice(0, 7)}`.toLowerCase();
    delete promo.metadata.generateName;
    promo.metadata.labels = { ...promo.metadata.labels, 'kargo.akuity.io/stage': stageName };
    promo.metadata.annotations = { ...promo.metadata.annotations, 'kargo.akuity.io/create-actor': `kubernetes:${request.user ?? 'system'}` };
    promo.metadata.ownerReferences = [{ apiVersion: 'kargo.akuity.io/v1alpha1', kind: 'Stage', name: stageName, uid: stage.metadata.uid!, controller: true, blockOwnerDeletion: true }];
    promo.spec = { ...promo.spec, steps: structuredClone(steps), ...(stage.spec?.promotionTemplate?.spec?.vars ? { vars: stage.spec.promotionTemplate.spec.vars } : {}) };
  });
}
