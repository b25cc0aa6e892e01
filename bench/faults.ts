/**
 * bench:faults — the fault campaign of issue 9 replayed against the real pipeline (facts queue →
 * reducer worker → release store → Slack outbox → "slack" queue → writer → real WebClient) on a
 * redis-server of its own (AOF, fsync always) and the Slack stand-in, with:
 *   - a Redis kill -9 and restart in the middle of the facts,
 *   - a Slack outage (503 on every method) far longer than the writer's backoff, shortened by config,
 *   - ambiguous failures: Slack stores the post, then answers 500, drops the connection, or answers
 *     after the client's timeout; plus 429s and plain 5xx.
 * Counts replies the reducer asked for against what Slack shows, by the effect id in each
 * message's metadata. The last line is one JSON object.
 */
import { parseEnv } from '../src/config/env.js';
import { startGlidepath } from '../src/glidepath.js';
import type { RolloutFact } from '../src/facts/fact.js';
import { normaliseRollout } from '../src/facts/normalise.js';
import { rolloutFactBody } from '../src/facts/schemas.js';
import { createMetrics } from '../src/obs/metrics.js';
import { freePort } from '../sandbox/ensure-redis.js';
import { startSlackStandIn } from '../sandbox/slack/server.js';
import { stormConfig, stormRolloutBody } from './storm-facts.js';
import { OwnRedis } from '../test/helpers/redis-server.js';

const RELEASES = Number(process.env.FAULTS_RELEASES ?? 12);
const STAGES = 4;
const ROLLOUTS_PER_STAGE = 5;
const FACTS_PER_ROLLOUT = 20;
/** The outage Slack plays (the campaign's 10 minutes, shortened); the writer's backoff is shortened with it. */
const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_SECONDS ?? 8) * 1000;
const AMBIGUOUS_EACH = Number(process.env.FAULTS_AMBIGUOUS ?? 8);
const CONVERGE_TIMEOUT_MS = 300_000;
const log = (line: string) => console.log(line);


/** Stage by stage, every release's Rollouts interleaved, in the order each Rollout reports. */
function facts(): RolloutFact[] {
  const out: RolloutFact[] = [];
  for (let k = 0; k < STAGES; k += 1) {
    for (let j = 0; j < FACTS_PER_ROLLOUT; j += 1) {
      for (let r = 0; r < RELEASES; r += 1) {
        for (let i = 0; i < ROLLOUTS_PER_STAGE; i += 1) {
          const { body } = stormRolloutBody({ release: r, stage: k, rollout: i, index: j });
          out.push(normaliseRollout(rolloutFactBody.parse(body), 'prod', 0));
        }
      }
    }
  }
  return out;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`gave up waiting for ${what}`);
  return false;
}

async function main(): Promise<void> {
  const cfg = stormConfig(RELEASES, STAGES);
  const redisServer = new OwnRedis(await freePort(), { aof: true });
  await redisServer.start();
  const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
  const expected = new Set<string>();
  // One Glidepath with the reducer and the writer, on the bench's own Redis, built by the composition root.
  const app = await startGlidepath({
    env: parseEnv({
      PORT: '0',
      REDIS_URL: redisServer.url,
      REDIS_PREFIX: '{bench-faults}',
      SLACK_BOT_TOKEN: 'xoxb-bench',
      SLACK_API_URL: slack.apiUrl,
      REDUCER_CONCURRENCY: '8',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    }),
    config: cfg,
    roles: ['worker', 'writer'],
    host: '127.0.0.1',
    metrics: createMetrics({ defaultMetrics: false }),
    commands: false,
    observeThreads: (record, effects) => {
      for (const e of effects) if (e.type === 'thread.reply') expected.add(`${record.pipeline}|${record.releaseId}|${e.id}`);
    },
    tuning: {
      writerConcurrency: 16,
      // The 10-minute outage is played in seconds: the backoff is shortened by the same config a deployment has.
      writerRetry: { baseMs: 100, capMs: 1_000, maxMs: 3_600_000 },
      writerCallTimeoutMs: 1_000,
      writerBudgets: { postPerChannel: { burst: 3, perMinute: 120 }, update: { burst: 20, perMinute: 600 }, history: { burst: 20, perMinute: 600 } },
    },
  });
  const { keys, store } = app;
  const redis = app.redis.workers;
  const factQueue = app.facts;
  const slackQueue = app.slack!.queue!;
  const registry = app.metrics.registry;

  // Ambiguous answers and refusals, spread over the run.
  const faultKinds = [
    { kind: 'accepted-then-http', status: 500 },
    { kind: 'accepted-then-drop' },
    { kind: 'slow', delayMs: 2_500 },
    { kind: 'rate-limited', retryAfterSeconds: 1 },
    { kind: 'http', status: 502 },
  ] as const;
  const injectAmbiguous = () => {
    for (const f of faultKinds) slack.injectFaults('chat.postMessage', AMBIGUOUS_EACH, f);
    slack.injectFaults('chat.update', AMBIGUOUS_EACH, { kind: 'accepted-then-drop' });
  };

  const plan = facts();
  log(`faults: ${RELEASES} releases × ${STAGES} stages × ${ROLLOUTS_PER_STAGE} Rollouts, ${plan.length} facts; Slack outage ${OUTAGE_MS / 1000} s; ${AMBIGUOUS_EACH} of each ambiguous fault`);
  const t0 = Date.now();
  let retriedAdds = 0;
  const addWithRetry = async (fact: RolloutFact) => {
    for (;;) {
      try {
        fact.receivedAt = Date.now();
        await factQueue.add(fact);
        return;
      } catch {
        // Redis is down: the ingest route answers 503 and the sender retries, as here.
        retriedAdds += 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const at = (fraction: number) => Math.floor(plan.length * fraction);
  const BATCH = 50;
  for (let i = 0; i < plan.length; i += BATCH) {
    if (i === at(0.1) - (at(0.1) % BATCH)) injectAmbiguous();
    if (i === at(0.3) - (at(0.3) % BATCH)) {
      log(`Slack outage starts (${OUTAGE_MS / 1000} s)`);
      slack.outage(OUTAGE_MS);
    }
    if (i === at(0.5) - (at(0.5) % BATCH)) {
      log('kill -9 redis-server, restart it on the same AOF');
      await redisServer.stop();
      setTimeout(() => void redisServer.start(), 500);
    }
    if (i === at(0.7) - (at(0.7) % BATCH)) injectAmbiguous();
    await Promise.all(plan.slice(i, i + BATCH).map(addWithRetry));
    await new Promise((r) => setTimeout(r, 20));
  }
  log(`facts added in ${((Date.now() - t0) / 1000).toFixed(1)} s (${retriedAdds} adds retried while Redis was down)`);

  const states = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;
  const converged = await until(
    'the queues to drain',
    async () => {
      const [a, b] = await Promise.all([factQueue.queue.getJobCounts(...states), slackQueue.getJobCounts(...states)]);
      return [...Object.values(a), ...Object.values(b)].every((n) => n === 0);
    },
    CONVERGE_TIMEOUT_MS,
  );
  log(`${converged ? 'drained' : 'NOT drained'} ${((Date.now() - t0) / 1000).toFixed(1)} s after the start`);

  // What Slack shows, by the metadata each message carries.
  const shown = new Map<string, number>();
  let repliesSent = 0;
  let orphanParents = 0;
  for (const p of cfg.pipelines) {
    const parents = slack.transcript.messages(p.channel);
    const perRelease = new Map<string, number>();
    for (const parent of parents) {
      const release = String(parent.metadata?.event_payload.release ?? '?');
      perRelease.set(release, (perRelease.get(release) ?? 0) + 1);
      for (const r of parent.replies) {
        repliesSent += 1;
        const key = `${p.name}|${release}|${String(r.metadata?.event_payload.effect ?? '?')}`;
        shown.set(key, (shown.get(key) ?? 0) + 1);
      }
    }
    for (const [release, n] of perRelease) {
      const thread = await store.get(p.name, release).then(() => redis.hget(keys.slackThread(p.name, release), 'ts'));
      orphanParents += n - (thread && parents.some((m) => m.ts === thread) ? 1 : 0);
    }
  }
  const lost = [...expected].filter((k) => !shown.has(k)).length;
  const doubledReplies = [...shown.values()].reduce((n, c) => n + (c - 1), 0);
  const faultCounts = {
    outage503: [...slack.outageRefused.values()].reduce((n, c) => n + c, 0),
    rateLimited: [...slack.rateLimited.values()].reduce((n, c) => n + c, 0),
  };
  const adopted = (await registry.getSingleMetric('glidepath_slack_adopted_posts_total')!.get()).values.reduce((n, v) => n + v.value, 0);
  log(`Slack calls: ${JSON.stringify(Object.fromEntries([...slack.calls.entries()].sort()))}; faults seen: ${JSON.stringify(faultCounts)}; posts adopted after a lost answer: ${adopted}`);

  await app.close();
  await slack.close();
  await redisServer.stop();
  redisServer.cleanup();

  log(
    JSON.stringify({
      bench: 'faults',
      facts: plan.length,
      lost,
      doubledReplies,
      orphanParents,
      repliesSent,
      repliesExpected: expected.size,
    }),
  );
  process.exit(lost === 0 && doubledReplies === 0 && orphanParents === 0 && converged ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
