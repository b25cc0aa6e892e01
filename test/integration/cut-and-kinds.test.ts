/**
 * Issue 20, rows 4 and 5, through a real Glidepath (HTTP, queue, reducer, Redis, the Slack
 * stand-in): an abort whose status.message is 40 KB is accepted, its message cut, and the thread
 * says it was aborted (it used to be a 422 and the thread said Paused for ever); a Secret or an
 * Application posted on the Rollouts path is a 422 naming `rollout.kind` and changes nothing; and a
 * Secret arriving on the Rollouts watch (the stand-in API server's hostile hook answers the watch
 * with it) is refused by the same schema and never becomes a release.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostileExchange, ServedRequest } from '../../sandbox/kube/server.js';
import { factsOfJob } from '../../src/facts/fact-batches.js';
import { INGEST_TOKEN, postJson } from '../helpers/glidepath.js';
import { fixture } from '../helpers/rollout-bodies.js';
import { startSlackGlidepath, type SlackGlidepath } from '../helpers/slack-glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0123CHECKOUT';

/** The aborted payload fixture, for its own release id and resourceVersion. */
function abortedBody(releaseId: string, rv: number, message: string): Record<string, any> {
  const body = fixture('aborted');
  body.rollout.metadata.annotations['hangar.io/release-id'] = releaseId;
  body.rollout.metadata.resourceVersion = String(rv);
  body.rollout.status.message = message;
  return body;
}

const rejectedCount = async (g: SlackGlidepath['glidepath'], source: string, reason: string): Promise<number> => {
  const metric = await g.metrics.registry.getSingleMetric('glidepath_facts_rejected_total')?.get();
  return metric?.values.find((v) => v.labels.source === source && v.labels.reason === reason)?.value ?? 0;
};

const jobCount = async (g: SlackGlidepath['glidepath']): Promise<number> =>
  Object.values(await g.facts.queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')).reduce((a, b) => a + b, 0);

describe('over-long text and wrong kinds on the webhook', () => {
  let rig: SlackGlidepath;
  beforeAll(async () => {
    rig = await startSlackGlidepath();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('an abort with a 40 KB status.message is accepted (202), the record says Aborted with the message cut, and so does the thread', async () => {
    const message = `RolloutAborted: metric "error-rate" assessed Failed due to failed (1) > failureLimit (0) ${'e'.repeat(40_000)}`;
    const res = await postJson(`${rig.glidepath.url}/v1/facts/rollouts`, abortedBody('rel-long', 81_300, message));
    expect(res.status).toBe(202);
    const record = await waitFor(async () => {
      const r = await rig.glidepath.store.get('checkout', 'rel-long');
      return r?.status === 'Aborted' ? r : undefined;
    }, 'rel-long aborted');
    const target = Object.values(record.stages.find((s) => s.name === 'prod')!.targets)[0]!;
    expect(target.aborted).toBe(true);
    expect(target.message).toHaveLength(16_384);
    expect(target.message.endsWith('…')).toBe(true);
    expect(message.startsWith(target.message.slice(0, -1))).toBe(true);
    const reply = await waitFor(
      async () => rig.slack.transcript.messages(CHANNEL).flatMap((m) => m.replies).find((r) => r.text.includes('prod/shop/checkout') && r.text.includes('was aborted')),
      'the aborted reply',
    );
    // The reply quotes the start of the message (the thread has its own, shorter, bound).
    expect(JSON.stringify(reply.blocks)).toContain('RolloutAborted: metric');
  }, 30_000);

  it.each([
    ['a Secret', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', data: { password: 'aHVudGVyMg==' } }, 'rollout.kind: expected Rollout, got Secret'],
    ['an Application', { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', spec: { project: 'default' }, status: { sync: { status: 'Synced' } } }, 'rollout.kind: expected Rollout, got Application'],
    ['a Rollout of another group', { apiVersion: 'example.com/v1alpha1', kind: 'Rollout' }, 'rollout.apiVersion: expected argoproj.io/v1alpha1, got example.com/v1alpha1'],
  ])('%s posted on /v1/facts/rollouts is a 422 naming the field, and nothing is queued or recorded', async (_what, object, reason) => {
    const releaseId = `rel-kind-${object.kind.toLowerCase()}-${object.apiVersion.length}`;
    // Metadata a Rollout of the checkout stage would carry, so only the kind tells them apart.
    const metadata = { ...abortedBody(releaseId, 81_400, 'x').rollout.metadata };
    const before = { jobs: await jobCount(rig.glidepath), rejected: await rejectedCount(rig.glidepath, 'rollouts-webhook', 'invalid_body') };
    const res = await postJson(`${rig.glidepath.url}/v1/facts/rollouts`, { event: 'on-glidepath-rollout-aborted', sentAt: 1787218310, rollout: { ...object, metadata } });
    expect(res.status).toBe(422);
    expect(res.json.message).toBe(reason);
    expect(res.json.issues).toEqual([{ path: reason.split(':')[0], message: reason.slice(reason.indexOf(':') + 2) }]);
    expect(await jobCount(rig.glidepath)).toBe(before.jobs);
    expect(await rejectedCount(rig.glidepath, 'rollouts-webhook', 'invalid_body')).toBe(before.rejected + 1);
    expect(await rig.glidepath.store.get('checkout', releaseId)).toBeUndefined();
  });

  it('an over-long phase (a token, not text) is still refused, and the 422 names its path', async () => {
    const body = abortedBody('rel-phase', 81_500, 'fine');
    body.rollout.status.phase = 'Degraded'.repeat(9);
    const res = await postJson(`${rig.glidepath.url}/v1/facts/rollouts`, body, INGEST_TOKEN);
    expect(res.status).toBe(422);
    expect(res.json.message).toBe('rollout.status.phase: longer than 64 characters');
  });
});

describe('a Secret on the Rollouts watch', () => {
  let world: WatchedWorld;
  const answered: string[] = [];
  beforeAll(async () => {
    world = await startWatchedWorld({ channel: 'C0KINDS', glidepathLater: true });
    const { store } = world.cluster;
    // The first watch of Rollouts is answered with one Secret event (labelled and annotated as a
    // shop Rollout would be, with the generation a Rollout has), then the stream ends; the watch
    // resumes against the real store.
    world.cluster.server.hostile = (request: ServedRequest, { res, watch }: HostileExchange) => {
      if (!watch || request.resource !== 'rollouts' || answered.length > 0) return false;
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          namespace: 'shop',
          name: 'checkout',
          uid: 'secret-uid-1',
          resourceVersion: store.resourceVersion(),
          generation: 1,
          labels: { 'app.kubernetes.io/part-of': 'shop', env: 'prod' },
          annotations: { 'hangar.io/release-id': 'rel-secret' },
        },
        type: 'Opaque',
        data: { password: 'aHVudGVyMg==' },
      };
      answered.push(request.labelSelector ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ADDED', object: secret })}\n`);
      return true;
    };
    await world.startGlidepath();
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('is refused by the Rollout schema and counted; the Rollout after it is reduced; no release is made of the Secret', async () => {
    await waitFor(async () => answered.length > 0 || undefined, 'the hostile watch answered');
    world.deploy('cart', '1.0.0', 'rel-real');
    await world.runFor(5_000);
    await waitFor(async () => (await world.app.store.get('shop', 'rel-real')) ?? undefined, 'rel-real recorded');
    const metric = await world.app.metrics.registry.getSingleMetric('glidepath_facts_rejected_total')?.get();
    const rejected = metric?.values.find((v) => v.labels.source === 'watch' && v.labels.reason === 'invalid_object')?.value ?? 0;
    expect(rejected).toBeGreaterThanOrEqual(1);
    expect(await world.app.store.get('shop', 'rel-secret')).toBeUndefined();
    // Nothing of the Secret was queued: every Rollout fact is of the real cart Rollout.
    const jobs = await world.app.facts.queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
    const rollouts = jobs.flatMap((j) => factsOfJob(j)).map((q) => q.fact).filter((f) => f.kind === 'rollout');
    expect(rollouts.length).toBeGreaterThan(0);
    expect(rollouts.every((f) => f.kind === 'rollout' && f.target.name === 'cart')).toBe(true);
  }, 60_000);
});
