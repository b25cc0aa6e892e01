/**
 * Canary steps as the Argo Rollouts controller reads them (pkg/apis/rollouts/v1alpha1
 * types.go `CanaryStep`): the pause duration, the weight in force at a step, and the step's text in
 * `RolloutStepCompleted` events. The simulator's own reading, independent of Glidepath's.
 */
export type CanaryStepSpec = {
  setWeight?: number;
  pause?: { duration?: number | string };
  analysis?: unknown;
  experiment?: unknown;
  setCanaryScale?: { weight?: number; replicas?: number; matchTrafficWeight?: boolean };
  setHeaderRoute?: { name?: string };
  setMirrorRoute?: { name?: string };
  plugin?: { name?: string };
};

/** Pause duration in ms; undefined = wait for promote; -1 = invalid (as types.go treats it). */
export function pauseDurationMs(pause: { duration?: number | string }): number | undefined {
  const d = pause.duration;
  if (d === undefined) return undefined;
  if (typeof d === 'number') return d * 1000;
  if (/^\d+$/.test(d)) return Number(d) * 1000;
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(d);
  if (!m || d === '') return -1;
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000;
}

/** The weight of the last setWeight at or before step `index` (0 before any). */
export function weightAt(steps: readonly CanaryStepSpec[], index: number): number {
  let w = 0;
  for (let k = 0; k <= Math.min(index, steps.length - 1); k++) if (steps[k]?.setWeight !== undefined) w = steps[k]!.setWeight!;
  return w;
}

/**
 * `CanaryStepString` (utils/rollout/rolloututil.go): the first field set names the step; a pause
 * shows its duration as written (IntOrString: `300`, `10m`).
 */
export function canaryStepText(step: CanaryStepSpec): string {
  if (step.setWeight !== undefined) return `setWeight: ${step.setWeight}`;
  if (step.pause) return step.pause.duration === undefined ? 'pause' : `pause: ${step.pause.duration}`;
  if (step.experiment) return 'experiment';
  if (step.analysis) return 'analysis';
  const scale = step.setCanaryScale;
  if (scale) {
    if (scale.weight !== undefined) return `setCanaryScale{weight: ${scale.weight}}`;
    if (scale.matchTrafficWeight) return 'setCanaryScale{matchTrafficWeight: true}';
    if (scale.replicas !== undefined) return `setCanaryScale{replicas: ${scale.replicas}}`;
  }
  if (step.setHeaderRoute) return `setHeaderRoute: ${step.setHeaderRoute.name ?? ''}`;
  if (step.setMirrorRoute) return `setMirrorRoute: ${step.setMirrorRoute.name ?? ''}`;
  if (step.plugin) return `plugin: ${step.plugin.name ?? ''}`;
  return 'invalid';
}
