/**
 * Releases of "checkout" (testConfig: staging, then prod) as the Rollouts notifications report
 * them, at chosen times: one that completes, one that fails (Degraded), one that is aborted.
 * For the delivery figures' tests, which need lead and recovery times they can compute by hand.
 */
import type { RolloutFact } from '../../src/facts/fact.js';
import { rolloutFact } from './reduce-harness.js';
import { rolloutBody, type RolloutShape } from './rollout-bodies.js';

export const MINUTE = 60_000;

type Stage = 'staging' | 'prod';

/** Release `n` of checkout: its own image and pod hash; `rv` grows with every fact sent. */
export class CheckoutReleases {
  private rv = 1_000;

  private fact(stage: Stage, n: number, at: number, shape: Pick<RolloutShape, 'phase'> & Partial<RolloutShape>): RolloutFact {
    const hash = `hash${String(n).padStart(6, '0')}`;
    const body = rolloutBody({
      name: stage === 'staging' ? 'checkout-staging' : 'checkout',
      uid: `uid-${stage}`,
      labels: { 'app.kubernetes.io/part-of': 'checkout', env: stage },
      generation: n,
      rv: this.rv++,
      releaseId: `rel-${n}`,
      image: `registry.example.com/shop/checkout:1.${n}.0`,
      podHash: hash,
      stableRS: shape.phase === 'Healthy' ? hash : 'hash-previous',
      ...shape,
    });
    return rolloutFact(body, at);
  }

  /** Starts at `start`, staging healthy after `stagingMs`, prod healthy `leadMs` after the start. */
  completes(n: number, start: number, leadMs: number, stagingMs = 5 * MINUTE): RolloutFact[] {
    return [
      this.fact('staging', n, start, { phase: 'Progressing', step: 0, message: 'more replicas need to be updated' }),
      this.fact('staging', n, start + stagingMs, { phase: 'Healthy' }),
      this.fact('prod', n, start + stagingMs + MINUTE, { phase: 'Progressing', step: 0, message: 'more replicas need to be updated' }),
      this.fact('prod', n, start + leadMs, { phase: 'Healthy' }),
    ];
  }

  /** Both stages already Healthy in the first facts heard of release `n` (Glidepath started after it rolled out). */
  healthyWhenFirstHeard(n: number, at: number): RolloutFact[] {
    return [this.fact('staging', n, at, { phase: 'Healthy' }), this.fact('prod', n, at, { phase: 'Healthy' })];
  }

  /** Starts at `start` and is Degraded in staging `afterMs` later. */
  fails(n: number, start: number, afterMs: number): RolloutFact[] {
    return [
      this.fact('staging', n, start, { phase: 'Progressing', step: 0, message: 'more replicas need to be updated' }),
      this.fact('staging', n, start + afterMs, { phase: 'Degraded', message: 'ProgressDeadlineExceeded' }),
    ];
  }

  /** Starts at `start` and is aborted in staging `afterMs` later. */
  aborted(n: number, start: number, afterMs: number): RolloutFact[] {
    return [
      this.fact('staging', n, start, { phase: 'Progressing', step: 0, message: 'more replicas need to be updated' }),
      this.fact('staging', n, start + afterMs, { phase: 'Degraded', abort: true, message: 'RolloutAborted: Rollout aborted update to revision 6' }),
    ];
  }
}
