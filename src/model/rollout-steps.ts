/**
 * Canary steps as people read them (`setWeight: 20`, `pause: 10m`), and the weight a canary
 * is meant to carry at a given step. Labels use the same words as `kubectl argo rollouts get`.
 */
import { num, record, str } from './json.js';

function durationText(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return str(value);
}

export function canaryStepLabel(step: unknown): string {
  const s = record(step) ?? {};
  const setWeight = num(s.setWeight);
  if (setWeight !== undefined) return `setWeight: ${setWeight}`;
  const pause = record(s.pause);
  if (pause) {
    const duration = durationText(pause.duration);
    return duration === undefined ? 'pause' : `pause: ${duration}`;
  }
  if (record(s.experiment)) return 'experiment';
  if (record(s.analysis)) return 'analysis';
  const scale = record(s.setCanaryScale);
  if (scale) {
    const weight = num(scale.weight);
    if (weight !== undefined) return `setCanaryScale{weight: ${weight}}`;
    if (scale.matchTrafficWeight === true) return 'setCanaryScale{matchTrafficWeight: true}';
    const replicas = num(scale.replicas);
    if (replicas !== undefined) return `setCanaryScale{replicas: ${replicas}}`;
  }
  const plugin = record(s.plugin);
  if (plugin) return `plugin: ${str(plugin.name) ?? ''}`;
  const header = record(s.setHeaderRoute);
  if (header) return `setHeaderRoute: ${str(header.name) ?? ''}`;
  const mirror = record(s.setMirrorRoute);
  if (mirror) return `setMirrorRoute: ${str(mirror.name) ?? ''}`;
  return 'invalid';
}

/**
 * The weight the steps ask for while at `index`: the last setWeight at or before it, 0 before
 * any, 100 once every step is done.
 */
export function stepWeight(steps: readonly unknown[], index: number): number {
  if (index >= steps.length) return 100;
  for (let i = Math.min(index, steps.length - 1); i >= 0; i--) {
    const weight = num(record(steps[i])?.setWeight);
    if (weight !== undefined) return weight;
  }
  return 0;
}
