/**
 * The Kargo stream of bench/kinds.ts: one project of 20 Stages over 3 pipeline stages (2 dev,
 * 6 staging, 12 prod, selected by label), and FREIGHTS Freight promoted through all of them, one
 * after the other. Objects are shaped as the Kargo controller writes them (the sandbox's
 * simulator, sandbox/kube/controllers/kargo.ts, is the model: Promotion Pending → Running step by
 * step → Succeeded, the Stage's currentPromotion → lastPromotion and freightHistory, health, a
 * verification where the Stage has one, the Freight's currentlyIn and verifiedIn), each write a
 * new resourceVersion, and become facts through the product's own schemas and normalisers, with
 * the lookup the watch keeps (the Freight by name, a Stage's labels). The Stages of one tier move
 * together: their writes are interleaved, as a controller working them in parallel makes them.
 *
 * Per Freight: 1 Freight fact on creation, then per Stage 5 Promotion facts, 4 Stage facts and
 * 2 Freight facts (221 facts for 20 Stages).
 */
import { createHash } from 'node:crypto';
import type { KargoFact } from '../src/facts/kargo-fact.js';
import { freightRefOf, normaliseKargoFreight, normaliseKargoPromotion, normaliseKargoStage, type KargoLookup } from '../src/facts/normalise-kargo.js';
import { freightSchema } from '../src/model/kargo-freight.js';
import { promotionSchema } from '../src/model/kargo-promotion.js';
import { stageSchema } from '../src/model/kargo-stage.js';

export const KARGO_PROJECT = 'kargo-checkout';
export const TIER_LABEL = 'bench.glidepath.dev/tier';
/** Kargo Stages per pipeline stage (20 in all); staging and prod verify each Freight. */
export const TIERS = [
  { tier: 'dev', stages: 2, verification: false },
  { tier: 'staging', stages: 6, verification: true },
  { tier: 'prod', stages: 12, verification: true },
] as const;

const REPO = 'registry.example.com/shop/checkout';
const GIT = 'https://git.example.com/shop/checkout.git';
const STEPS = [
  { uses: 'git-clone', as: 'clone' },
  { uses: 'kustomize-set-image', as: 'update-image' },
  { uses: 'git-commit', as: 'commit' },
  { uses: 'git-push', as: 'push' },
  { uses: 'argocd-update', as: 'sync' },
];

type Obj = Record<string, any>;

const hex = (s: string, n = 40): string => createHash('sha256').update(s).digest('hex').slice(0, n);

export function kargoStream(freights: number, cluster: string, t0: number): KargoFact[] {
  let rv = 5_000;
  let clock = t0;
  const iso = (): string => new Date((clock += 1000)).toISOString().replace(/\.\d+Z$/, 'Z');
  const facts: KargoFact[] = [];
  const freightObjects = new Map<string, Obj>();
  const stages = new Map<string, Obj>();
  const lookup: KargoLookup = {
    freight: (_ns, name) => {
      const f = freightObjects.get(name);
      const parsed = f ? freightSchema.parse(f) : undefined;
      return parsed ? freightRefOf({ ...parsed, name }, parsed.alias) : undefined;
    },
    stageLabels: (_ns, name) => stages.get(name)?.metadata.labels,
  };
  for (const { tier, stages: count, verification } of TIERS) {
    for (let i = 1; i <= count; i++) {
      const name = `${tier}-${i}`;
      stages.set(name, {
        metadata: { namespace: KARGO_PROJECT, name, uid: `uid-stage-${name}`, generation: 1, resourceVersion: String(++rv), labels: { [TIER_LABEL]: tier } },
        spec: {
          requestedFreight: [{ origin: { kind: 'Warehouse', name: 'checkout' }, sources: tier === 'dev' ? { direct: true } : { stages: [`${tier === 'staging' ? 'dev' : 'staging'}-1`] } }],
          promotionTemplate: { spec: { steps: STEPS } },
          ...(verification ? { verification: { analysisTemplates: [{ name: 'smoke-test' }] } } : {}),
        },
        status: { health: { status: 'Unknown' }, conditions: [] },
      });
    }
  }
  const stageFact = (s: Obj): void => {
    s.metadata.resourceVersion = String(++rv);
    facts.push(normaliseKargoStage(stageSchema.parse(s), cluster, clock, 'watch', lookup));
  };
  const promotionFact = (p: Obj): void => {
    p.metadata.resourceVersion = String(++rv);
    facts.push(normaliseKargoPromotion(promotionSchema.parse(p), cluster, clock, 'watch', lookup));
  };
  const freightFact = (f: Obj): void => {
    f.metadata.resourceVersion = String(++rv);
    facts.push(normaliseKargoFreight(freightSchema.parse(f), cluster, clock, 'watch'));
  };

  for (let n = 1; n <= freights; n++) {
    const name = hex(`freight-${n}`);
    const image = { repoURL: REPO, tag: `1.${n}.0`, digest: `sha256:${hex(`image-${n}`, 64)}`, annotations: { 'org.opencontainers.image.revision': hex(`commit-${n}`) } };
    const freight: Obj = {
      metadata: { namespace: KARGO_PROJECT, name, uid: `uid-freight-${n}`, resourceVersion: '0', labels: { 'kargo.akuity.io/alias': `brave-lynx-${n}` } },
      alias: `brave-lynx-${n}`,
      origin: { kind: 'Warehouse', name: 'checkout' },
      images: [image],
      commits: [{ repoURL: GIT, id: hex(`commit-${n}`), branch: 'main' }],
      status: {},
    };
    freightObjects.set(name, freight);
    freightFact(freight);
    const ref: Obj = { name, origin: freight.origin, images: freight.images, commits: freight.commits };
    for (const { tier, stages: count, verification } of TIERS) {
      const names = Array.from({ length: count }, (_, i) => `${tier}-${i + 1}`);
      const promos = new Map<string, Obj>();
      const each = (f: (stage: Obj, promo: Obj) => void): void => {
        for (const s of names) f(stages.get(s)!, promos.get(s)!);
      };
      for (const s of names) {
        const promo: Obj = {
          metadata: { namespace: KARGO_PROJECT, name: `${s}.01j${hex(`${s}-${n}`, 23)}.${name.slice(0, 7)}`, uid: `uid-promo-${s}-${n}`, resourceVersion: '0', labels: { 'kargo.akuity.io/stage': s }, annotations: { 'kargo.akuity.io/create-actor': tier === 'dev' ? 'controller:kargo-controller' : 'email:release-manager@example.com' } },
          spec: { stage: s, freight: name, steps: STEPS },
          status: { phase: 'Pending' },
        };
        promos.set(s, promo);
        promotionFact(promo);
      }
      each((stage, promo) => {
        const startedAt = iso();
        promo.status = { phase: 'Running', startedAt, currentStep: 0, freight: ref, stepExecutionMetadata: [{ alias: 'clone', startedAt, status: 'Running' }] };
        promotionFact(promo);
        stage.status = { ...stage.status, currentPromotion: { name: promo.metadata.name, freight: ref }, health: { status: 'Unknown' }, conditions: [{ type: 'Promoting', status: 'True', reason: 'ActivePromotion', message: `Promotion "${promo.metadata.name}" is currently Running`, lastTransitionTime: startedAt }] };
        stageFact(stage);
      });
      for (const step of [2, 4]) {
        each((_stage, promo) => {
          const at = iso();
          const meta = promo.status.stepExecutionMetadata as Obj[];
          for (let i = meta.length; i <= step; i++) {
            if (meta[i - 1]) Object.assign(meta[i - 1]!, { status: 'Succeeded', finishedAt: at });
            meta.push({ alias: STEPS[i]!.as, startedAt: at, status: 'Running' });
          }
          promo.status = { ...promo.status, currentStep: step, stepExecutionMetadata: meta };
          promotionFact(promo);
        });
      }
      each((stage, promo) => {
        const at = iso();
        const meta = promo.status.stepExecutionMetadata as Obj[];
        Object.assign(meta[meta.length - 1]!, { status: 'Succeeded', finishedAt: at });
        promo.status = { ...promo.status, phase: 'Succeeded', finishedAt: at, freightCollection: { id: name, items: { 'Warehouse/checkout': ref } } };
        promotionFact(promo);
        const st = { ...stage.status };
        delete st.currentPromotion;
        st.lastPromotion = { name: promo.metadata.name, freight: ref, status: promo.status, finishedAt: at };
        st.freightHistory = [{ id: name, items: { 'Warehouse/checkout': ref } }, ...(st.freightHistory ?? [])].slice(0, 10);
        st.freightSummary = name;
        st.health = { status: 'Progressing' };
        st.conditions = [{ type: 'Healthy', status: 'Unknown', reason: 'Progressing', message: 'Stage health is Progressing', lastTransitionTime: at }];
        stage.status = st;
        stageFact(stage);
        freight.status = { ...freight.status, currentlyIn: { ...freight.status.currentlyIn, [stage.metadata.name]: { since: at } } };
        freightFact(freight);
      });
      each((stage) => {
        const at = iso();
        const held = stage.status.freightHistory[0];
        if (verification) held.verificationHistory = [{ id: `${stage.metadata.name}.${hex(at, 12)}`, actor: 'kargo-controller', phase: 'Running', startTime: at, analysisRun: { name: `${stage.metadata.name}.${hex(at, 12)}`, namespace: KARGO_PROJECT, phase: 'Running' } }, ...(held.verificationHistory ?? [])].slice(0, 10);
        stage.status = { ...stage.status, health: { status: 'Healthy' }, conditions: [{ type: 'Healthy', status: 'True', reason: 'Healthy', message: 'Stage is healthy (performed 1 health checks)', lastTransitionTime: at }] };
        stageFact(stage);
      });
      each((stage) => {
        const at = iso();
        const held = stage.status.freightHistory[0];
        if (verification) Object.assign(held.verificationHistory[0], { phase: 'Successful', finishTime: at, analysisRun: { ...held.verificationHistory[0].analysisRun, phase: 'Successful' } });
        stage.status = { ...stage.status, conditions: [...stage.status.conditions, { type: 'Verified', status: 'True', reason: 'Verified', message: 'Freight has been verified', lastTransitionTime: at }] };
        stageFact(stage);
        freight.status = { ...freight.status, verifiedIn: { ...freight.status.verifiedIn, [stage.metadata.name]: { verifiedAt: at } } };
        freightFact(freight);
      });
    }
  }
  return facts;
}

