/**
 * Turns validated bodies into Facts. The webhook path and the (later) watch path both hand us
 * Kubernetes-shaped objects, so both go through these functions.
 */
import type { ApplicationFactBody, ApplicationSetFactBody, ReleaseAnnouncementBody, RolloutFactBody } from './schemas.js';
import type { ApplicationFact, ApplicationSetFact, FactSource, ReleaseAnnouncedFact, RolloutFact } from './fact.js';
import { deriveRolloutState } from '../model/rollout-state.js';
import { comparisonOf } from '../model/application.js';
import { cutCodePoints } from '../model/unicode.js';

/** Annotations that are large or change with every notification, and mean nothing to a release. */
const DROPPED_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration', 'notified.notifications.argoproj.io'];

function keptAnnotations(annotations: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations)) {
    if (!DROPPED_ANNOTATIONS.includes(k)) out[k] = v.length > 1024 ? `${cutCodePoints(v, 1024)}…` : v;
  }
  return out;
}

/** `argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<ns>/<name>`, or the legacy instance label. */
export function managingApplication(labels: Record<string, string>, annotations: Record<string, string>): string | undefined {
  const tracking = annotations['argocd.argoproj.io/tracking-id'];
  if (tracking) {
    const app = tracking.split(':')[0];
    if (app) return app.includes('_') ? app.split('_').pop() : app;
  }
  return labels['app.kubernetes.io/instance'] || undefined;
}

export function normaliseRollout(
  body: RolloutFactBody,
  cluster: string,
  receivedAt: number,
  source: FactSource = 'rollouts-webhook',
): RolloutFact {
  const { metadata, spec, status } = body.rollout;
  const state = deriveRolloutState(body.rollout);
  const images = (spec?.template?.spec?.containers ?? [])
    .map((c) => c.image)
    .filter((i): i is string => typeof i === 'string' && i.length > 0)
    .sort();
  const annotations = keptAnnotations(metadata.annotations);
  return {
    kind: 'rollout',
    source,
    event: body.event,
    sentAt: body.sentAt,
    receivedAt,
    target: { kind: 'Rollout', cluster, namespace: metadata.namespace, name: metadata.name },
    rollout: {
      uid: metadata.uid ?? '',
      generation: metadata.generation,
      observed: state.observed,
      resourceVersion: metadata.resourceVersion,
      labels: metadata.labels,
      annotations,
      images,
      podHash: state.podHash,
      stableHash: state.stableHash,
      phase: state.phase,
      message: state.message,
      pause: state.pause,
      aborted: state.aborted,
      abortedAt: state.abortedAt,
      step: state.step,
      ...((status as Record<string, unknown> | undefined)?.promoteFull === true ? { promoteFull: true as const } : {}),
      weight: state.weight,
      replicas: {
        desired: spec?.replicas ?? undefined,
        current: status?.replicas ?? undefined,
        updated: status?.updatedReplicas ?? undefined,
        ready: status?.readyReplicas ?? undefined,
        available: status?.availableReplicas ?? undefined,
      },
      restartedAt: status?.restartedAt ?? undefined,
      analysis: state.analysis,
      managedBy: managingApplication(metadata.labels, annotations),
    },
  };
}

function comparisonField(app: ApplicationFactBody['application']): Pick<ApplicationFact['application'], 'comparison'> {
  const comparison = comparisonOf(app);
  return comparison ? { comparison } : {};
}

export function normaliseApplication(
  body: ApplicationFactBody,
  cluster: string,
  receivedAt: number,
  source: FactSource = 'argocd-webhook',
): ApplicationFact {
  const { metadata, spec, status } = body.application;
  const owner = (metadata.ownerReferences ?? []).find((o) => o.controller === true && o.kind === 'ApplicationSet');
  const op = status?.operationState ?? undefined;
  const revisions = status?.sync?.revisions?.length ? status.sync.revisions : status?.sync?.revision ? [status.sync.revision] : [];
  const runningHooks = (op?.syncResult?.resources ?? [])
    .filter((r) => r.hookType && r.hookPhase === 'Running')
    .map((r) => `${r.hookType} ${r.kind ?? ''}/${r.name ?? ''}`.trim());
  return {
    kind: 'application',
    source,
    event: body.event,
    sentAt: body.sentAt,
    receivedAt,
    target: { kind: 'Application', cluster, namespace: metadata.namespace, name: metadata.name },
    application: {
      uid: metadata.uid,
      generation: metadata.generation,
      resourceVersion: metadata.resourceVersion,
      labels: metadata.labels,
      annotations: keptAnnotations(metadata.annotations),
      appSet: owner?.name,
      destination: spec?.destination ?? undefined,
      syncStatus: status?.sync?.status,
      revisions,
      health: status?.health?.status ? { status: status.health.status, message: status.health.message } : undefined,
      ...(status?.health?.lastTransitionTime ? { healthSince: status.health.lastTransitionTime } : {}),
      ...comparisonField(body.application),
      reconciledAt: status?.reconciledAt ?? undefined,
      ...(status?.summary?.images?.length ? { images: [...status.summary.images].sort() } : {}),
      operation: op
        ? {
            phase: op.phase,
            message: op.message,
            startedAt: op.startedAt,
            finishedAt: op.finishedAt ?? undefined,
            retryCount: op.retryCount ?? undefined,
            retryLimit: op.operation?.retry?.limit ?? undefined,
            revision: op.syncResult?.revision ?? op.syncResult?.revisions?.[0],
            initiatedBy: op.operation?.initiatedBy?.username,
            runningHooks,
          }
        : undefined,
    },
  };
}

/** Member messages are for a person reading a reply: a line, not a log. */
const MEMBER_MESSAGE_LIMIT = 300;

export function normaliseApplicationSet(body: ApplicationSetFactBody, cluster: string, receivedAt: number, source: FactSource = 'watch'): ApplicationSetFact {
  const { metadata, spec, status } = body.applicationSet;
  const rolling = spec?.strategy?.type === 'RollingSync';
  return {
    kind: 'application-set',
    source,
    event: body.event,
    sentAt: body.sentAt,
    receivedAt,
    target: { kind: 'ApplicationSet', cluster, namespace: metadata.namespace, name: metadata.name },
    appSet: {
      uid: metadata.uid,
      generation: metadata.generation,
      resourceVersion: metadata.resourceVersion,
      stepCount: rolling ? (spec?.strategy?.rollingSync?.steps?.length ?? 0) : undefined,
      members: (status?.applicationStatus ?? []).map((e) => ({
        application: e.application,
        status: e.status ?? 'Waiting',
        step: e.step ?? '-1',
        targetRevisions: e.targetRevisions ?? [],
        ...(e.lastTransitionTime ? { lastTransitionTime: e.lastTransitionTime } : {}),
        ...(e.message ? { message: e.message.length > MEMBER_MESSAGE_LIMIT ? `${cutCodePoints(e.message, MEMBER_MESSAGE_LIMIT)}…` : e.message } : {}),
      })),
    },
  };
}

export function normaliseAnnouncement(body: ReleaseAnnouncementBody, receivedAt: number, cluster?: string): ReleaseAnnouncedFact {
  return {
    kind: 'release',
    source: 'ci',
    receivedAt,
    cluster,
    pipeline: body.pipeline,
    releaseId: body.releaseId,
    images: [...body.images].sort(),
    commit: body.commit,
    pullRequestUrl: body.pullRequestUrl,
    author: body.author,
    ...(body.authorSlackId ? { authorSlackId: body.authorSlackId } : {}),
    ...(body.mergedBySlackId ? { mergedBySlackId: body.mergedBySlackId } : {}),
  };
}
