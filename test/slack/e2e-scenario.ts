/** A release of "checkout" through staging and prod, as the Rollouts notifications would report it. */
import type { RolloutFact } from '../../src/facts/fact.js';
import { rolloutFact } from '../helpers/reduce-harness.js';
import { rolloutBody, type RolloutShape } from '../helpers/rollout-bodies.js';

const labels = (env: string) => ({ 'app.kubernetes.io/part-of': 'checkout', env });
const OLD = '6d9b8c7f5a';
const NEW = '7c9d6b5f48';

function at(stage: 'staging' | 'prod', shape: Partial<RolloutShape> & Pick<RolloutShape, 'rv' | 'phase'>): RolloutShape {
  return {
    name: stage === 'staging' ? 'checkout-staging' : 'checkout',
    uid: stage === 'staging' ? 'uid-staging' : 'uid-prod',
    labels: labels(stage),
    generation: 5,
    releaseId: 'rel-5',
    image: 'registry.example.com/shop/checkout:1.30.0',
    podHash: NEW,
    stableRS: OLD,
    ...shape,
  };
}

/** The Rollouts notification bodies in order, as they reach POST /v1/facts/rollouts. */
export function releaseBodies(): Record<string, unknown>[] {
  const shapes: RolloutShape[] = [
    at('staging', { rv: 100, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }),
    at('staging', { rv: 101, stableRS: NEW, phase: 'Healthy' }),
    at('prod', { rv: 200, step: 0, phase: 'Progressing', message: 'more replicas need to be updated' }),
    at('prod', { rv: 201, step: 1, phase: 'Paused' }),
    at('prod', { rv: 202, step: 2, phase: 'Progressing', message: 'more replicas need to be updated' }),
    at('prod', { rv: 210, stableRS: NEW, phase: 'Healthy' }),
  ];
  return shapes.map((s) => rolloutBody(s));
}

/** The facts in order; `pausedIndex` is the fact that asks a person to approve. */
export function releaseFacts(now: number): { facts: RolloutFact[]; pausedIndex: number } {
  return { facts: releaseBodies().map((body, i) => rolloutFact(body, now + i * 1000)), pausedIndex: 3 };
}
