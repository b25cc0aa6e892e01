/**
 * The streams of bench/kinds.ts besides Kargo's (bench/kinds-kargo.ts), and the config that
 * follows all of them:
 *
 *   rollouts  the baseline: Rollout facts of canary releases (bench/storm-facts.ts' timeline,
 *             20 per Rollout, 5 Rollouts per stage, 4 stages per pipeline), every one a new
 *             resourceVersion as the watch sees them, cut to the count asked for.
 *   appset    one ApplicationSet of CHILDREN children in 3 RollingSync steps rolling out one
 *             revision: each child's refresh (OutOfSync at the new revision), the ApplicationSet
 *             listing every child Waiting, then per step every child of the step Pending, and in
 *             chunks of CHUNK children Progressing, then Healthy (with `childSync`, each child's
 *             own fact, synced and Healthy, before its chunk turns Healthy). The ApplicationSet
 *             carries every child's entry in each fact, as its status does. A child's fact costs
 *             in proportion to the children the release holds, so the children's sync facts are
 *             off by default (the run would take minutes; the refresh facts measure the same).
 * Objects become facts through the product's schemas and normalisers.
 */
import { configFileSchema, type ConfigFile } from '../src/config/file.js';
import type { ApplicationFact, ApplicationSetFact, RolloutFact } from '../src/facts/fact.js';
import { normaliseApplication, normaliseApplicationSet, normaliseRollout } from '../src/facts/normalise.js';
import { applicationFactBody, applicationSetFactBody, rolloutFactBody } from '../src/facts/schemas.js';
import { applicationObject, applicationSetObject, type MemberState } from '../test/helpers/appset-world.js';
import { stormRolloutBody } from './storm-facts.js';
import { KARGO_PROJECT, TIER_LABEL, TIERS } from './kinds-kargo.js';

/** Webhook cluster of the Rollouts; the Kargo project and the ApplicationSet are watched. */
export const ROLLOUT_CLUSTER = 'prod';
export const WATCHED_CLUSTER = 'platform';
export const KARGO_PIPELINE = 'checkout-kargo';
export const APPSET_PIPELINE = 'checkout-appset';
export const STEPS = 3;

const ROLLOUTS_PER_STAGE = 5;
const ROLLOUT_STAGES = 4;
const FACTS_PER_ROLLOUT = 20;
export const ROLLOUT_FACTS_PER_PIPELINE = ROLLOUTS_PER_STAGE * ROLLOUT_STAGES * FACTS_PER_ROLLOUT;

export function kindsConfig(rolloutPipelines: number): ConfigFile {
  return configFileSchema.parse({
    clusters: [
      // No kubeconfig in a bench: optional, so start-up goes on without one.
      { name: ROLLOUT_CLUSTER, kubeconfigContext: ROLLOUT_CLUSTER, optional: true },
      { name: WATCHED_CLUSTER, kubeconfigContext: WATCHED_CLUSTER, facts: 'watch', optional: true },
    ],
    pipelines: [
      ...Array.from({ length: rolloutPipelines }, (_, r) => ({
        name: `svc-${r}`,
        channel: `C0SVC${r}`,
        stages: Array.from({ length: ROLLOUT_STAGES }, (_, k) => ({
          name: `s${k}`,
          cluster: ROLLOUT_CLUSTER,
          rollouts: { namespace: `svc-${r}`, selector: `app.kubernetes.io/part-of=svc-${r},env=s${k}` },
        })),
      })),
      {
        name: KARGO_PIPELINE,
        channel: 'C0KARGO',
        stages: TIERS.map(({ tier }) => ({ name: tier, cluster: WATCHED_CLUSTER, kargo: { project: KARGO_PROJECT, selector: `${TIER_LABEL}=${tier}` } })),
      },
      {
        name: APPSET_PIPELINE,
        channel: 'C0APPSET',
        stages: Array.from({ length: STEPS }, (_, i) => ({ name: `step-${i + 1}`, cluster: WATCHED_CLUSTER, applicationSet: { namespace: 'argocd', name: 'checkout', step: i + 1 } })),
      },
    ],
  });
}

/** `count` Rollout facts over ceil(count / 400) pipelines; stage after stage, the Rollouts of a stage interleaved. */
export function rolloutStream(count: number): RolloutFact[] {
  const facts: RolloutFact[] = [];
  let rv = 10_000;
  for (let r = 0; facts.length < count; r++) {
    for (let k = 0; k < ROLLOUT_STAGES; k++) {
      for (let j = 0; j < FACTS_PER_ROLLOUT; j++) {
        for (let i = 0; i < ROLLOUTS_PER_STAGE && facts.length < count; i++) {
          const { body } = stormRolloutBody({ release: r, stage: k, rollout: i, index: j });
          (body as { rollout: { metadata: { resourceVersion: string } } }).rollout.metadata.resourceVersion = String(++rv);
          facts.push(normaliseRollout(rolloutFactBody.parse(body), ROLLOUT_CLUSTER, 0, 'watch'));
        }
      }
    }
  }
  return facts;
}

export const pipelinesFor = (rolloutFacts: number): number => Math.ceil(rolloutFacts / ROLLOUT_FACTS_PER_PIPELINE);

/** Step sizes of `children` over 3 steps: 10 %, 30 %, the rest (a canary slice, a region, everything else). */
function stepSizes(children: number): number[] {
  const first = Math.max(1, Math.round(children * 0.1));
  const second = Math.max(1, Math.round(children * 0.3));
  return [first, second, children - first - second];
}

export function appSetStream(children: number, chunk: number, t0: number, childSync = false): (ApplicationFact | ApplicationSetFact)[] {
  const out: (ApplicationFact | ApplicationSetFact)[] = [];
  const revision = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
  const from = '0f1e2d3c4b5a69788796a5b4c3d2e1f001234567';
  let rv = 50_000;
  let clock = t0;
  const iso = (): string => new Date((clock += 1000)).toISOString().replace(/\.\d+Z$/, 'Z');
  const sizes = stepSizes(children);
  const steps: string[][] = [];
  let n = 0;
  for (const size of sizes) steps.push(Array.from({ length: size }, () => `checkout-${String(n++).padStart(4, '0')}`));
  const members: Record<string, MemberState & { step: number }> = {};
  const before = iso();
  steps.forEach((names, i) => {
    for (const name of names) members[name] = { status: 'Healthy', targetRevisions: [from], step: i + 1, lastTransitionTime: before };
  });
  const app = (name: string, state: Parameters<typeof applicationObject>[2]): void => {
    out.push(normaliseApplication(applicationFactBody.parse({ event: 'watch', application: applicationObject(name, ++rv, state, { step: String(members[name]!.step) }) }), WATCHED_CLUSTER, clock, 'watch'));
  };
  const appSet = (names: string[], change: Partial<MemberState>): void => {
    const now = iso();
    for (const name of names) members[name] = { ...members[name]!, ...change, lastTransitionTime: now };
    out.push(normaliseApplicationSet(applicationSetFactBody.parse({ event: 'watch', applicationSet: applicationSetObject(++rv, members, STEPS) }), WATCHED_CLUSTER, clock, 'watch'));
  };
  const all = steps.flat();
  for (const name of all) app(name, { sync: 'OutOfSync', health: 'Healthy', revision, reconciledAt: iso() });
  appSet(all, { status: 'Waiting', targetRevisions: [revision] });
  for (const names of steps) {
    appSet(names, { status: 'Pending' });
    for (let i = 0; i < names.length; i += chunk) appSet(names.slice(i, i + chunk), { status: 'Progressing' });
    for (let i = 0; i < names.length; i += chunk) {
      const part = names.slice(i, i + chunk);
      for (const name of childSync ? part : []) {
        const startedAt = iso();
        app(name, { sync: 'Synced', health: 'Healthy', revision, op: { phase: 'Succeeded', startedAt, revision }, reconciledAt: startedAt });
      }
      appSet(part, { status: 'Healthy' });
    }
  }
  return out;
}
