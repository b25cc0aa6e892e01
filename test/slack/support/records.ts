/** Builders of release records for Slack tests: small, explicit, every field a real reducer sets. */
import type { PipelineConfig } from '../../../src/config/file.js';
import { compileLabelSelector } from '../../../src/model/label-selector.js';
import type { TargetRef } from '../../../src/facts/fact.js';
import type { ReleaseRecord, StageState, TargetState } from '../../../src/releases/record/record.js';
import type { ThreadReplyEffect } from '../../../src/slack/render/types.js';
import { targetKey } from '../../../src/facts/fact.js';

export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

export function pipelineConfig(name = 'checkout', channel = 'C0CHECKOUT', stages = ['staging', 'prod']): PipelineConfig {
  return {
    name,
    channel,
    releaseIdAnnotation: 'hangar.io/release-id',
    stages: stages.map((s) => ({ name: s, cluster: 'prod', rollouts: { namespace: 'shop', selector: compileLabelSelector(`env=${s}`) } })),
  };
}

export function ref(name: string, cluster = 'prod', namespace = 'shop'): TargetRef {
  return { kind: 'Rollout', cluster, namespace, name };
}

export function target(name: string, overrides: Partial<TargetState> = {}): TargetState {
  return {
    ref: ref(name),
    uid: `uid-${name}`,
    generation: 3,
    podHash: '6b8f7c9d5',
    images: ['registry.example/checkout:1.4.2'],
    phase: 'Progressing',
    message: '',
    aborted: false,
    phaseSince: T0,
    lastHeardAt: T0,
    ...overrides,
  };
}

export function stage(name: string, status: StageState['status'], targets: TargetState[] = [], extra: Partial<StageState> = {}): StageState {
  return {
    name,
    cluster: 'prod',
    status,
    targets: Object.fromEntries(targets.map((t) => [targetKey(t.ref), t])),
    pending: [],
    ...(targets.length > 0 ? { lastHeardAt: T0 + 60_000 } : {}),
    ...extra,
  };
}

export function record(overrides: Partial<ReleaseRecord> = {}): ReleaseRecord {
  return {
    schema: 1,
    version: 1,
    pipeline: 'checkout',
    releaseId: 'rel-5',
    idSource: 'announcement',
    images: ['registry.example/checkout:1.4.2'],
    commit: '0123456789abcdef0123',
    pullRequestUrl: 'https://github.example/shop/checkout/pull/42',
    author: 'alice',
    createdAt: T0,
    updatedAt: T0 + 120_000,
    lastHeardAt: T0 + 120_000,
    status: 'InProgress',
    stages: [stage('staging', 'Healthy', [target('checkout-staging', { phase: 'Healthy' })], { healthyAt: T0 }), stage('prod', 'Waiting')],
    notices: [],
    events: [],
    counters: { facts: 1, duplicate: 0 },
    outbox: [],
    ...overrides,
  };
}

export function reply(kind: ThreadReplyEffect['kind'], detail: ThreadReplyEffect['detail'] = {}, extra: Partial<ThreadReplyEffect> = {}): ThreadReplyEffect {
  return {
    id: `reply-${kind}-${extra.stage ?? 'prod'}`,
    type: 'thread.reply',
    kind,
    stage: 'prod',
    target: ref('checkout'),
    needsPerson: kind !== 'stage-healthy' && kind !== 'heard-again' && kind !== 'release-complete',
    detail,
    ...extra,
  };
}
