/**
 * Rollout fact bodies shaped exactly like the reference payloads (the template's output), with
 * the fields a scenario changes. Starting from the real fixture keeps every other field real.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Rollout } from '../../src/model/rollout-state.js';

export const REFERENCE = fileURLToPath(new URL('../fixtures/', import.meta.url));
export const fixture = (name: string): Record<string, any> =>
  JSON.parse(readFileSync(`${REFERENCE}payloads/rollouts/${name}.json`, 'utf8'));
/** The Rollout of payload fixture `name`, as the model's judgements take it. */
export const payloadRollout = (name: string): Rollout => fixture(name).rollout as Rollout;
/** The judgements are total: tests also give them raw and partial objects that no schema has parsed. */
export const unparsed = (value: unknown): Rollout => value as Rollout;

/** Argo CD's Lua health check and resource actions for Rollouts, with their upstream test files. */
export const ARGOCD_ROLLOUT_CUSTOMIZATIONS = `${REFERENCE}upstream/argocd-rollout-customizations`;
export const readYaml = (file: string): Record<string, unknown> => parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** The seven steps of the payload scenario (payloads/rollouts/README.md); the payloads omit them. */
export const STEPS = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 50 },
  { pause: { duration: '10m' } },
  { analysis: { templates: [{ templateName: 'success-rate' }] } },
  { setWeight: 80 },
  { pause: { duration: '5m' } },
];

export interface RolloutShape {
  name?: string;
  namespace?: string;
  uid?: string;
  generation: number;
  observedGeneration?: number;
  rv: number;
  releaseId?: string;
  image?: string;
  podHash: string;
  stableRS: string;
  step?: number;
  phase: 'Healthy' | 'Progressing' | 'Paused' | 'Degraded';
  message?: string;
  pausedAt?: string;
  /** The pause condition's reason (default CanaryPauseStep; InconclusiveAnalysisRun after an inconclusive analysis). */
  pauseReason?: string;
  abort?: boolean;
  /** `status.promoteFull: true` (promote --full, before the controller clears it). */
  promoteFull?: boolean;
  replicas?: number;
  restartAt?: string;
  restartedAt?: string;
  labels?: Record<string, string>;
  event?: string;
  sentAt?: number;
  analysis?: { name: string; status: string; message?: string };
}

export function rolloutBody(s: RolloutShape): Record<string, any> {
  const body = fixture('paused');
  const r = body.rollout;
  body.event = s.event ?? 'on-glidepath-rollout-updated';
  body.sentAt = s.sentAt ?? 1_787_217_192 + s.rv;
  r.metadata.name = s.name ?? 'checkout';
  r.metadata.namespace = s.namespace ?? 'shop';
  r.metadata.uid = s.uid ?? '5f0c2a7e-1b7d-4c1e-9a43-3f2d8e1b6c90';
  r.metadata.generation = s.generation;
  r.metadata.resourceVersion = String(s.rv);
  if (s.labels) r.metadata.labels = s.labels;
  if (s.releaseId === undefined) delete r.metadata.annotations['hangar.io/release-id'];
  else r.metadata.annotations['hangar.io/release-id'] = s.releaseId;
  r.spec = {
    replicas: s.replicas ?? 5,
    ...(s.restartAt ? { restartAt: s.restartAt } : {}),
    strategy: { canary: { steps: STEPS, canaryService: 'checkout-canary', stableService: 'checkout-stable' } },
    template: { spec: { containers: [{ name: 'checkout', image: s.image ?? 'registry.example.com/shop/checkout:1.29.0' }] } },
  };
  const st = r.status;
  st.observedGeneration = String(s.observedGeneration ?? s.generation);
  st.currentPodHash = s.podHash;
  st.stableRS = s.stableRS;
  st.phase = s.phase;
  if (s.message === undefined && s.phase !== 'Paused') delete st.message;
  else st.message = s.message ?? s.pauseReason ?? 'CanaryPauseStep';
  st.currentStepIndex = s.step ?? (s.podHash === s.stableRS ? STEPS.length : 0);
  if (s.phase === 'Paused') {
    st.pauseConditions = [{ reason: s.pauseReason ?? 'CanaryPauseStep', startTime: s.pausedAt ?? '2026-08-20T09:13:11Z' }];
    st.controllerPause = true;
  } else {
    delete st.pauseConditions;
    delete st.controllerPause;
  }
  if (s.abort) {
    st.abort = true;
    st.abortedAt = '2026-08-20T09:20:00Z';
  } else {
    delete st.abort;
    delete st.abortedAt;
  }
  if (s.promoteFull) st.promoteFull = true;
  else delete st.promoteFull;
  if (s.restartedAt) st.restartedAt = s.restartedAt;
  st.canary = s.analysis ? { currentStepAnalysisRunStatus: s.analysis } : {};
  return body;
}
