/**
 * Verification, as the Kargo Stage controller runs it: a Stage with `spec.verification` starts an
 * Argo Rollouts AnalysisRun for the Freight it holds once it is Healthy after a successful
 * Promotion (never before), records it in `freightHistory[0].verificationHistory` (newest first,
 * Running → Successful, or Failed/Error with a message through the `verify` fault), and only a
 * Successful verification makes the Freight verified in the Stage. Without `spec.verification`,
 * being Healthy counts as verified. The AnalysisRun itself is named, not simulated.
 */
import { isoSeconds } from '../clock.js';
import type { KubeObject } from '../object.js';
import { ulid } from './ulid.js';

export interface VerificationOutcome {
  phase: 'Successful' | 'Failed' | 'Error' | 'Inconclusive';
  message?: string;
}

export interface VerificationStep {
  /** Whether the Freight now counts as verified in the Stage. */
  verified: boolean;
  /** When to reconcile the Stage again (a verification is running). */
  wakeAt?: number;
}

/**
 * Advances the verification of the Freight the Stage holds; updates `status` in place.
 * `verify` decides how a verification ends (default Successful).
 */
export function advanceVerification(stage: KubeObject, status: Record<string, any>, healthy: boolean, now: number, durationMs: number, verify?: (stage: KubeObject) => VerificationOutcome | undefined): VerificationStep { // eslint-disable-line @typescript-eslint/no-explicit-any
  const configured = (stage.spec?.verification?.analysisTemplates ?? []).length > 0;
  if (!configured) return { verified: healthy };
  const held = status.freightHistory?.[0];
  if (!held) return { verified: false };
  const history: Record<string, any>[] = held.verificationHistory ?? []; // eslint-disable-line @typescript-eslint/no-explicit-any
  const current = history[0];
  if (!current) {
    if (!healthy) return { verified: false };
    const name = `${stage.metadata.name}.${ulid(now).toLowerCase()}`;
    held.verificationHistory = [
      { id: name, actor: 'kargo-controller', phase: 'Running', startTime: isoSeconds(now), analysisRun: { name, namespace: stage.metadata.namespace, phase: 'Running' } },
      ...history,
    ].slice(0, 10);
    return { verified: false, wakeAt: now + durationMs };
  }
  if (current.phase === 'Running') {
    const due = Date.parse(current.startTime) + durationMs;
    if (now < due) return { verified: false, wakeAt: due };
    const outcome = verify?.(stage) ?? { phase: 'Successful' };
    Object.assign(current, { phase: outcome.phase, finishTime: isoSeconds(now), ...(outcome.message ? { message: outcome.message } : {}) });
    current.analysisRun = { ...current.analysisRun, phase: outcome.phase === 'Error' ? 'Error' : outcome.phase };
  }
  return { verified: current.phase === 'Successful' && healthy };
}
