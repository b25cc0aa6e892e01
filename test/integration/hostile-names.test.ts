/**
 * Strings no cluster would send: not well-formed Unicode, or names, labels and versions the
 * Kubernetes API server would refuse. Each is a 422 naming the field; nothing is queued.
 * And strings that are valid but awkward (an emoji in a revision) still make a release.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Glidepath } from '../../src/glidepath.js';
import { createKeys } from '../../src/store/keys.js';
import { dropPrefix, postJson, startTestGlidepath, testEnv } from '../helpers/glidepath.js';
import { testConfig } from '../helpers/pipeline.js';
import { rolloutBody } from '../helpers/rollout-bodies.js';
import { waitFor } from '../helpers/wait.js';

const WEB_PIPELINE = `
  - name: web
    channel: C0123WEB
    stages:
      - name: prod
        cluster: prod
        applications: { namespace: argocd, selector: "team=web" }
`;

function application(revision: string, name = 'web-frontend') {
  return {
    event: 'on-glidepath-sync-succeeded',
    application: {
      metadata: { namespace: 'argocd', name, uid: `uid-${name}`, resourceVersion: '7', labels: { team: 'web' }, annotations: {} },
      status: { sync: { status: 'Synced', revision }, health: { status: 'Healthy' } },
    },
  };
}

describe('hostile strings at ingest', () => {
  const env = testEnv();
  let app: Glidepath;
  beforeAll(async () => {
    app = await startTestGlidepath(testConfig(WEB_PIPELINE), env);
  });
  afterAll(async () => {
    await app.close();
    await dropPrefix(env.REDIS_PREFIX);
  });

  const good = () => rolloutBody({ generation: 3, rv: 300, releaseId: 'rel-names', podHash: 'a1', stableRS: 'a1', phase: 'Healthy' });

  it('a lone surrogate anywhere in a fact is a 422 that names where', async () => {
    const body = good();
    body.rollout.metadata.annotations['note'] = 'broken \ud83d here';
    const res = await postJson(`${app.url}/v1/facts/rollouts`, body);
    expect(res.status).toBe(422);
    expect(res.json.message).toBe('rollout.metadata.annotations.note: is not well-formed Unicode (a lone UTF-16 surrogate)');

    const key = good();
    key.rollout.status.message = 'fine';
    key.rollout.metadata.labels['\udc00'] = 'x';
    expect((await postJson(`${app.url}/v1/facts/rollouts`, key)).status).toBe(422);
    const announced = await postJson(`${app.url}/v1/facts/argocd`, application('abc\ud800def'));
    expect(announced.status).toBe(422);
  });

  it('an emoji cut in half by the release id is never a lone surrogate: the release is made', async () => {
    // 11 characters then an emoji: cutting at 12 UTF-16 units would keep only its first half.
    const revision = 'abcdefghijk😀-tail';
    expect((await postJson(`${app.url}/v1/facts/argocd`, application(revision))).status).toBe(202);
    const record = await waitFor(async () => (await app.store.get('web', 'revision-abcdefghijk😀')) ?? undefined, 'release of the emoji revision');
    expect(record.stages[0]!.status).toBe('Healthy');
  });

  it.each([
    ['a / in a name', (b: any) => (b.rollout.metadata.name = 'check/out'), 'rollout.metadata.name: must be a Kubernetes object name'],
    ['a control character in a name', (b: any) => (b.rollout.metadata.name = 'checkout\n'), 'rollout.metadata.name: must be a Kubernetes object name'],
    ['an upper-case namespace', (b: any) => (b.rollout.metadata.namespace = 'Shop'), 'rollout.metadata.namespace: must be a Kubernetes namespace'],
    ['a namespace with a dot', (b: any) => (b.rollout.metadata.namespace = 'shop.prod'), 'rollout.metadata.namespace: must be a Kubernetes namespace'],
    ['generation 0', (b: any) => (b.rollout.metadata.generation = 0), 'rollout.metadata.generation: must be a positive integer'],
    ['a negative generation', (b: any) => (b.rollout.metadata.generation = '-4'), 'rollout.metadata.generation: must be a positive integer'],
    ['a generation past 2^53', (b: any) => (b.rollout.metadata.generation = '9007199254740993'), 'rollout.metadata.generation: must be a positive integer'],
    ['a fractional generation', (b: any) => (b.rollout.metadata.generation = 2.5), 'rollout.metadata.generation: must be a positive integer'],
    ['an empty resourceVersion', (b: any) => (b.rollout.metadata.resourceVersion = ''), 'rollout.metadata.resourceVersion: must not be empty'],
    ['a label key with a space', (b: any) => (b.rollout.metadata.labels['bad key'] = 'x'), 'rollout.metadata.labels: label key "bad key" is not a Kubernetes label key'],
    ['a label value of 64 characters', (b: any) => (b.rollout.metadata.labels['env'] = 'a'.repeat(64)), 'rollout.metadata.labels: label "env" has a value Kubernetes would refuse'],
  ])('%s is refused with a 422', async (_what, mutate, message) => {
    const body = good();
    mutate(body);
    const res = await postJson(`${app.url}/v1/facts/rollouts`, body);
    expect(res.status).toBe(422);
    expect(res.json.message).toContain(message);
  });

  it('what Kubernetes does send is accepted: dotted names, prefixed label keys, string generations', async () => {
    const body = good();
    body.rollout.metadata.name = 'checkout.v2';
    body.rollout.metadata.generation = '12';
    body.rollout.metadata.labels['app.kubernetes.io/version'] = '1.2.3_rc-1';
    body.rollout.metadata.labels['empty'] = '';
    expect((await postJson(`${app.url}/v1/facts/rollouts`, body)).status).toBe(202);
  });
});

describe('keys', () => {
  it('are built for any string, and stay distinct', () => {
    const keys = createKeys('{p}');
    expect(keys.release('checkout', 'rel-1')).toBe('{p}:release:checkout:rel-1');
    const lone = keys.release('checkout', '\ud800');
    const other = keys.release('checkout', '\udc00');
    const lookalike = keys.release('checkout', '$d800');
    expect(new Set([lone, other, lookalike]).size).toBe(3);
    expect(keys.slackReplyClaim('p\udfff', 'r', 'e')).toMatch(/^\{p\}:slack-reply-claim:\$[0-9a-f]+:r:e$/);
  });
});
