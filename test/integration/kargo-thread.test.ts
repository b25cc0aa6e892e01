/**
 * A Kargo pipeline followed with notifications off: Glidepath watches the simulated cluster's
 * Kargo Stages, Promotions and Freight and keeps one Slack thread per release. dev → staging
 * (verified by an AnalysisRun) → prod (the Stages labelled tier=prod): the thread shows each
 * Stage's Freight, Promotion (and who asked), health and verification; an autoscaling flap after
 * healthy is shown as "now Progressing" and fails nothing; Degraded after healthy is still
 * reported; a failed Promotion says its step and message; a failed verification names its
 * AnalysisRun; Stages that join or leave the selection while a release is in flight count or stop
 * counting at once, and an older observation of a deleted Stage reduced late does not bring it back;
 * a CI announcement and a Freight with the same images meet in one thread in either order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { startKubeServer } from '../../sandbox/kube/server.js';
import { normaliseKargoStage } from '../../src/facts/normalise-kargo.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { getJson, postJson } from '../helpers/glidepath.js';
import { waitFor } from '../helpers/wait.js';
import { USERS } from '../kube/support.js';
import { KARGO_CHANNEL, KARGO_CI_TOKEN, PROJECT, REPO, startKargoWorld, type KargoWorld } from '../helpers/kargo-world.js';

describe('a Kargo pipeline in one Slack thread per release', { timeout: 60_000 }, () => {
  let world: KargoWorld;
  // Replies in words: a finished release's timeline image (a file share) is test/integration/release-timeline.test.ts's.
  const replies = (m: TranscriptMessage | undefined) => (m?.replies ?? []).filter((r) => (r.files ?? []).length === 0).map((r) => world.parentText(r));
  const row = (m: TranscriptMessage, stage: string) => world.parentText(m).split('\n').filter((l, i, all) => l.includes(`*${stage}*`) || (i > 0 && all[i - 1]?.includes(`*${stage}*`)) || l.startsWith('• kargo-checkout/'));

  beforeAll(async () => {
    world = await startKargoWorld({
      kargo: {
        faults: {
          fail: (p) => (p.spec.freight === failing ? { phase: 'Failed', message: 'remote rejected: branch main is protected', atStep: 'update-image' } : undefined),
          verify: (s) => (s.status?.freightHistory?.[0]?.id === unverified ? { phase: 'Failed', message: 'error rate 7% > 5%' } : undefined),
        },
      },
    });
    world.stage({ name: 'dev' });
    world.stage({ name: 'staging', upstream: ['dev'], verification: true });
    world.stage({ name: 'prod-eu', upstream: ['staging'], labels: { tier: 'prod' } });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  let failing = '';
  let unverified = '';

  it('dev → staging → prod: Freight, Promotion and who asked, verification, and the release Complete', async () => {
    const freight = world.freight('1.0.0', 'frozen-tiger', { 'hangar.io/release-id': 'rel-1' });
    await world.promote('dev', freight);
    const devHealthy = await world.until('dev healthy', () => world.thread('rel-1')?.replies.find((r) => r.text.includes('*dev* is Healthy')));
    // The Promote button toward staging carries the Freight that proved healthy.
    expect(JSON.stringify(devHealthy.blocks)).toContain(freight);
    await world.promote('staging', freight);
    await world.until('staging verified and healthy', () => replies(world.thread('rel-1')).some((t) => t.includes('*staging* is Healthy')));
    await world.promote('prod-eu', freight);
    // The reply and the parent's edit are jobs of their own: either may reach Slack first.
    const done = await world.until('rel-1 complete', () => {
      const m = world.thread('rel-1');
      return m && replies(m).some((t) => t.includes('is complete')) && world.parentText(m).includes(':white_check_mark: *Complete*') && m;
    });
    const text = world.parentText(done);
    expect(text).toContain(':white_check_mark: *Complete*');
    expect(text).toContain('• kargo-checkout/staging — Healthy · Freight *frozen-tiger* (`checkout:1.0.0`) · Promotion Succeeded by kubernetes:admin');
    expect(text).toMatch(/verification Successful \(`staging\.[0-9a-z]{26}`\)/);
    expect(text).toContain('• kargo-checkout/prod-eu — Healthy');
    expect(row(done, 'prod').join('\n')).toContain('prod-eu');
  });

  it('an autoscaling flap after healthy: the row stays healthy and says Progressing now; no failure reply', async () => {
    const before = replies(world.thread('rel-1')).length;
    world.appHealth('staging', 'Progressing');
    const flapped = await world.until('staging shows Progressing now', () => {
      const m = world.thread('rel-1');
      return m && world.parentText(m).includes('kargo-checkout/staging — Healthy: healthy since promotion · now Progressing') && m;
    });
    expect(world.parentText(flapped)).toContain(':white_check_mark: *Complete*');
    world.appHealth('staging', 'Healthy');
    await world.until('staging plain healthy again', () => world.thread('rel-1') && !world.parentText(world.thread('rel-1')!).includes('now Progressing'));
    expect(replies(world.thread('rel-1')).slice(before)).toEqual([]);
  });

  it('Degraded after healthy is still reported', async () => {
    world.appHealth('prod-eu', 'Degraded');
    const reply = await world.until('the degraded reply', () => replies(world.thread('rel-1')).find((t) => t.includes('`prod/kargo-checkout/prod-eu` is Degraded')));
    expect(reply).toContain('Stage Unhealthy');
    world.appHealth('prod-eu', 'Healthy');
  });

  it('a failed Promotion: the thread names the failing step and its message, and the release failed', async () => {
    failing = world.freight('1.1.0', 'brave-otter', { 'hangar.io/release-id': 'rel-2' });
    const name = await world.promote('dev', failing);
    const reply = await world.until('the promotion-failed reply', () => replies(world.thread('rel-2')).find((t) => t.includes('the Kargo Promotion')));
    expect(reply).toBe(`:x: *dev* — \`prod/kargo-checkout/dev\`: the Kargo Promotion \`${name}\` failed at step \`update-image\` (requested by \`kubernetes:admin\`).\n>remote rejected: branch main is protected`);
    const parent = await world.until('rel-2 failed', () => world.parentText(world.thread('rel-2')!).includes(':x: *Failed*') && world.parentText(world.thread('rel-2')!));
    expect(parent).toContain('• kargo-checkout/dev — Degraded: Promotion Failed at step update-image: remote rejected: branch main is protected');
    // rel-1's dev moved on to rel-2: rel-1 still says it, and is still Complete.
    await world.until('rel-1 says dev moved on', () => world.parentText(world.thread('rel-1')!).includes('moved on to `rel-2`'));
  });

  it('a failed verification names its AnalysisRun, and the Freight goes no further', async () => {
    const freight = world.freight('1.2.0', 'calm-heron', { 'hangar.io/release-id': 'rel-3' });
    unverified = freight;
    await world.promote('dev', freight);
    await world.until('rel-3 dev healthy', () => replies(world.thread('rel-3')).some((t) => t.includes('*dev* is Healthy')));
    await world.promote('staging', freight);
    const reply = await world.until('verification-failed reply', () => replies(world.thread('rel-3')).find((t) => t.includes('verification')));
    expect(reply).toMatch(/^:x: \*staging\* — `prod\/kargo-checkout\/staging`: the verification of the Freight ended Failed \(AnalysisRun `staging\.[0-9a-z]{26}`\); the Freight does not move on from here\.\n>error rate 7% &gt; 5%$/);
    await world.until('rel-3 failed', () => world.parentText(world.thread('rel-3')!).includes(':x: *Failed*'));
  });

  it('a Kargo Stage that joins the selection in flight is one more target to wait for; one that leaves stops counting', async () => {
    const freight = world.freight('1.3.0', 'quiet-lynx', { 'hangar.io/release-id': 'rel-4' });
    for (const stage of ['dev', 'staging']) {
      await world.promote(stage, freight);
      await world.until(`rel-4 ${stage} healthy`, () => replies(world.thread('rel-4')).some((t) => t.includes(`*${stage}* is Healthy`)));
    }
    world.stage({ name: 'prod-us', upstream: ['staging'], labels: { tier: 'prod' } });
    // prod-us as first seen (no Freight yet): delivered again after its deletion below, late.
    const usAsCreated = structuredClone(world.cluster.store.get(world.cluster.store.registry.byKind('Stage', 'kargo.akuity.io'), PROJECT, 'prod-us'));
    world.stage({ name: 'prod-ap', upstream: ['staging'], labels: { tier: 'prod' } });
    await world.promote('prod-eu', freight);
    const waiting = await world.until('prod waits for the Stages that joined', () => {
      const m = world.thread('rel-4');
      return m && world.parentText(m).includes('1/3 Healthy · 2 not started') && m;
    });
    expect(world.parentText(waiting)).not.toContain('*Complete*');
    // prod-ap leaves the selection (relabelled), prod-us is promoted: then, and only then, Complete.
    world.relabelStage('prod-ap', { tier: 'canary' });
    await world.until('prod-ap stops counting', () => world.parentText(world.thread('rel-4')!).includes('1/2 Healthy · 1 not started'));
    expect(world.parentText(world.thread('rel-4')!)).not.toContain('*Complete*');
    await world.promote('prod-us', freight);
    await world.until('rel-4 complete', () => replies(world.thread('rel-4')).some((t) => t.includes('is complete')));
    await world.until('rel-4 shows both prod Stages healthy', () => world.parentText(world.thread('rel-4')!).includes('2/2 Healthy'));
    // A Stage deleted stops counting too: prod-us goes, and the release stays Complete with prod-eu.
    world.deleteStage('prod-us');
    await world.until('prod-us gone from the row', () => !world.parentText(world.thread('rel-4')!).includes('prod-us'));
    expect(world.parentText(world.thread('rel-4')!)).toContain(':white_check_mark: *Complete*');
    expect(replies(world.thread('rel-4')).filter((t) => t.includes('is complete'))).toHaveLength(1);
    // Its first observation, reduced again after the deletion (its job retried, as BullMQ retries a
    // job whose worker failed: the same data, no deduplication): the removal holds.
    const late = normaliseKargoStage(stageSchema.parse(usAsCreated), 'prod', Date.now(), 'watch');
    await world.app.facts.queues[0]!.add(late.kind, late);
    await waitFor(async () => {
      const counts = await Promise.all(world.app.facts.queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')));
      return counts.every((c) => Object.values(c).every((n) => n === 0)) || undefined;
    }, 'the late fact reduced');
    // What the bot believes once it was reduced (the read API), and the thread: still Complete, prod-us not waited for.
    const read = await getJson(`${world.app.url}/v1/releases/checkout-kargo/rel-4`);
    expect(read.json).toMatchObject({ status: 'Complete' });
    expect(JSON.stringify(read.json.stages)).not.toContain('prod-us');
    expect(world.parentText(world.thread('rel-4')!)).toContain(':white_check_mark: *Complete*');
    expect(world.parentText(world.thread('rel-4')!)).not.toContain('not started');
  });

  it('a CI announcement and a Freight with the same images meet in one thread', async () => {
    const announced = { releaseId: 'rel-ci-7', pipeline: 'checkout-kargo', images: [`${REPO}:2.0.0`], commit: 'abc1234def', author: 'alice' };
    expect((await postJson(`${world.app.url}/v1/releases`, announced, KARGO_CI_TOKEN)).status).toBe(202);
    await world.until('the announced thread', () => world.thread('rel-ci-7'));
    // The Freight carries no release id: its images are what CI announced.
    const freight = world.freight('2.0.0', 'lucky-panda');
    await world.promote('dev', freight);
    const parent = await world.until('the Freight in the announced thread', () => {
      const text = world.parentText(world.thread('rel-ci-7')!);
      return text.includes('• kargo-checkout/dev — Healthy · Freight *lucky-panda*') && text;
    });
    expect(parent).toContain('merged by alice');
    const threads = world.slack.transcript.messages(KARGO_CHANNEL).filter((m) => JSON.stringify(m.blocks).includes('checkout:2.0.0'));
    expect(threads).toHaveLength(1);
    expect(world.slack.transcript.messages(KARGO_CHANNEL).some((m) => JSON.stringify(m.blocks).includes(`Release freight-${freight}`))).toBe(false);
  });

  it('a Freight seen before its CI announcement: the announcement joins the Freight\'s thread, which then goes by the CI\'s id', async () => {
    // The Freight carries no release id and nobody announced it yet: its thread is its own.
    const freight = world.freight('2.1.0', 'swift-fox');
    await world.promote('dev', freight);
    await world.until('the Freight thread', () => world.thread(`freight-${freight}`) && replies(world.thread(`freight-${freight}`)).some((t) => t.includes('*dev* is Healthy')));
    const announced = { releaseId: 'rel-ci-8', pipeline: 'checkout-kargo', images: [`${REPO}:2.1.0`], commit: 'def5678abc', author: 'bob' };
    expect((await postJson(`${world.app.url}/v1/releases`, announced, KARGO_CI_TOKEN)).status).toBe(202);
    const joined = await world.until('the thread goes by the CI id', () => {
      const m = world.thread('rel-ci-8');
      return m && world.parentText(m).includes('merged by bob') && m;
    });
    expect(world.parentText(joined)).toContain(`announced by CI after its Freight opened \`freight-${freight}\``);
    expect(world.parentText(joined)).toContain('• kargo-checkout/dev — Healthy · Freight *swift-fox*');
    // The Freight goes on in the same thread.
    await world.promote('staging', freight);
    await world.until('staging in the joined thread', () => replies(world.thread('rel-ci-8')).some((t) => t.includes('*staging* is Healthy')));
    const threads = world.slack.transcript.messages(KARGO_CHANNEL).filter((m) => JSON.stringify(m.blocks).includes('checkout:2.1.0'));
    expect(threads).toHaveLength(1);
    // CI's release id finds the release; what CI announced stays fixed (409 on other details).
    const read = await getJson(`${world.app.url}/v1/releases/checkout-kargo/rel-ci-8`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ releaseId: `freight-${freight}`, announcedAs: 'rel-ci-8', author: 'bob', commit: 'def5678abc' });
    expect((await postJson(`${world.app.url}/v1/releases`, announced, KARGO_CI_TOKEN)).status).toBe(202);
    expect((await postJson(`${world.app.url}/v1/releases`, { ...announced, author: 'mallory' }, KARGO_CI_TOKEN)).status).toBe(409);
  });

  it('a Stage deleted while the watch could not see it (the API server down, its history compacted) stops counting at the relist', async () => {
    const freight = world.freight('3.0.0', 'late-crane', { 'hangar.io/release-id': 'rel-5' });
    world.stage({ name: 'prod-zz', upstream: ['staging'], labels: { tier: 'prod' } });
    for (const stage of ['dev', 'staging']) {
      await world.promote(stage, freight);
      await world.until(`rel-5 ${stage} healthy`, () => replies(world.thread('rel-5')).some((t) => t.includes(`*${stage}* is Healthy`)));
    }
    await world.promote('prod-eu', freight);
    await world.until('prod waits for prod-zz', () => world.parentText(world.thread('rel-5')!).includes('1/2 Healthy · 1 not started'));
    const port = Number(new URL(world.cluster.server.url).port);
    await world.cluster.server.close();
    world.deleteStage('prod-zz');
    world.cluster.store.compact();
    const restarted = await startKubeServer({ store: world.cluster.store, users: USERS, port });
    try {
      await world.until('rel-5 complete after the relist', () => replies(world.thread('rel-5')).some((t) => t.includes('is complete')));
      const parent = await world.until('prod-zz gone from rel-5', () => !world.parentText(world.thread('rel-5')!).includes('not started') && world.parentText(world.thread('rel-5')!));
      expect(parent).toContain(':white_check_mark: *Complete*');
      expect(parent).not.toContain('prod-zz');
    } finally {
      await restarted.close();
    }
  });
});

