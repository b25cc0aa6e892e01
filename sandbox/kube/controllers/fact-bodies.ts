/**
 * The webhook bodies Glidepath's notification templates (deploy/notifications/) render, built from
 * an object the way Go's text/template + sprig `toJson` would: a field missing on the object
 * renders as `null`, not as an absent key.
 */
import type { KubeObject } from '../object.js';

const OMITTED = ['kubectl.kubernetes.io/last-applied-configuration', 'notified.notifications.argoproj.io'];

function orNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

function annotationsWithoutLastApplied(obj: KubeObject): Record<string, string> | null {
  const a = obj.metadata.annotations;
  if (!a) return null;
  return Object.fromEntries(Object.entries(a).filter(([k]) => !OMITTED.includes(k)));
}

export interface RolloutFactBody {
  event: string;
  sentAt: number;
  rollout: { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: unknown };
}

export function rolloutFactBody(event: string, sentAtMs: number, rollout: KubeObject): RolloutFactBody {
  const spec = rollout.spec ?? {};
  return {
    event,
    sentAt: Math.floor(sentAtMs / 1000),
    rollout: {
      metadata: {
        namespace: orNull(rollout.metadata.namespace),
        name: rollout.metadata.name,
        uid: orNull(rollout.metadata.uid),
        resourceVersion: orNull(rollout.metadata.resourceVersion),
        generation: orNull(rollout.metadata.generation),
        labels: orNull(rollout.metadata.labels),
        annotations: annotationsWithoutLastApplied(rollout),
      },
      spec: {
        replicas: orNull(spec.replicas),
        paused: orNull(spec.paused),
        restartAt: orNull(spec.restartAt),
        strategy: orNull(spec.strategy),
        template: {
          spec: {
            containers: (spec.template?.spec?.containers ?? []).map((c: { name?: string; image?: string }) => ({ name: orNull(c.name), image: orNull(c.image) })),
          },
        },
      },
      status: orNull(rollout.status),
    },
  };
}

export interface ApplicationFactBody {
  event: string;
  sentAt: number;
  application: { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };
}

export function applicationFactBody(event: string, sentAtMs: number, app: KubeObject): ApplicationFactBody {
  const status = app.status ?? {};
  return {
    event,
    sentAt: Math.floor(sentAtMs / 1000),
    application: {
      metadata: {
        namespace: orNull(app.metadata.namespace),
        name: app.metadata.name,
        uid: orNull(app.metadata.uid),
        resourceVersion: orNull(app.metadata.resourceVersion),
        generation: orNull(app.metadata.generation),
        labels: orNull(app.metadata.labels),
        annotations: annotationsWithoutLastApplied(app),
        ownerReferences: orNull(app.metadata.ownerReferences),
      },
      spec: { project: orNull(app.spec?.project), destination: orNull(app.spec?.destination) },
      status: {
        sync: orNull(status.sync),
        health: orNull(status.health),
        operationState: orNull(status.operationState),
        reconciledAt: orNull(status.reconciledAt),
      },
    },
  };
}
