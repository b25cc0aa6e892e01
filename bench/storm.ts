/**
 * bench:storm — 50 concurrent releases × 4 stages × 5 Rollouts, 20,000 facts in 30 s, through
 * the real pipeline (fact schema + normaliser → "facts" queue → reducer worker → release store →
 * Slack outbox → "slack" queue → writer → real WebClient) to the Slack stand-in with Slack's
 * limits on. Prints what reached Slack against what a naive sender (one call per fact, as Argo
 * CD Notifications with PostAndUpdate) would have sent. The last line is one JSON object.
 *
 * Facts enter at the queue the HTTP ingest route feeds (after validation and normalisation), so
 * the HTTP edge itself is not in the measured path.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Histogram } from 'prom-client';
import { parseEnv } from '../src/config/env.js';
import type { RolloutFact } from '../src/facts/fact.js';
import { normaliseRollout } from '../src/facts/normalise.js';
import { rolloutFactBody } from '../src/facts/schemas.js';
import { startGlidepath } from '../src/glidepath.js';
import { createMetrics } from '../src/obs/metrics.js';
import { startSlackStandIn } from '../sandbox/slack/server.js';
import type { ButtonValue } from '../src/slack/buttons.js';
import { renderParent } from '../src/slack/render/parent.js';
import { connectRedis, deleteKeysWithPrefix } from '../src/store/redis.js';
import { stormConfig, stormRolloutBody } from './storm-facts.js';
import { loadAtStart, loadAverages } from './lib/load.js';

const RELEASES = Number(process.env.STORM_RELEASES ?? 50);
const STAGES = 4;
const ROLLOUTS_PER_STAGE = 5;
const FACTS_PER_ROLLOUT = 20;
const DURATION_MS = Number(process.env.STORM_SECONDS ?? 30) * 1000;
const CONVERGE_TIMEOUT_MS = 240_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';


interface Scheduled {
  at: number;
  fact: RolloutFact;
  /** Set on the fact that asks a person to approve: the key its reply will carry. */
  approvalKey?: string;
}

/** Stage k of every release runs in its own quarter of the window; each Rollout's facts are spread over it. */
function schedule(): Scheduled[] {
  const out: Scheduled[] = [];
  const window = DURATION_MS / STAGES;
  for (let r = 0; r < RELEASES; r += 1) {
    for (let k = 0; k < STAGES; k += 1) {
      for (let i = 0; i < ROLLOUTS_PER_STAGE; i += 1) {
        const start = k * window + ((r * ROLLOUTS_PER_STAGE + i) % 50) * (window * 0.15 / 50);
        const span = window * 0.8;
        for (let j = 0; j < FACTS_PER_ROLLOUT; j += 1) {
          const { body, approval } = stormRolloutBody({ release: r, stage: k, rollout: i, index: j });
          const at = start + (j * span) / FACTS_PER_ROLLOUT;
          const fact = normaliseRollout(rolloutFactBody.parse(body), 'prod', 0);
          out.push({ at, fact, ...(approval ? { approvalKey: `svc-${r}|svc-${r}/${fact.target.name}|1` } : {}) });
        }
      }
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const config = stormConfig(RELEASES, STAGES);
  const prefix = `{bench-storm-${randomUUID().slice(0, 8)}}`;
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'error' }, pino.destination(2));
  const slack = await startSlackStandIn({ botToken: 'xoxb-bench' });
  const env = parseEnv({ PORT: '0', REDIS_URL, REDIS_PREFIX: prefix, SLACK_BOT_TOKEN: 'xoxb-bench', SLACK_SIGNING_SECRET: 'bench-signing-secret', SLACK_API_URL: slack.apiUrl, REDUCER_CONCURRENCY: '16', LOG_LEVEL: 'error' });
  const metrics = createMetrics({ defaultMetrics: false });
  // One process with the reducer and the writer, as `GLIDEPATH_ROLE=worker,writer` runs them.
  const glidepath = await startGlidepath({ env, config, roles: ['worker', 'writer'], host: '127.0.0.1', logger, metrics, tuning: { writerConcurrency: 16 } });
  const { facts, store } = glidepath;
  const slackQueue = glidepath.slack!.queue!;

  const plan = schedule();
  const approvalAddedAt = new Map<string, number>();
  console.log(`storm: ${RELEASES} releases × ${STAGES} stages × ${ROLLOUTS_PER_STAGE} Rollouts, ${plan.length} facts over ${DURATION_MS / 1000} s`);
  const t0 = Date.now();
  // How far the reducer falls behind: facts added but not yet reduced, sampled while the storm runs.
  let maxFactBacklog = 0;
  const sampler = setInterval(() => {
    void facts.queue.getJobCounts('waiting', 'prioritized', 'active').then((c) => {
      maxFactBacklog = Math.max(maxFactBacklog, Object.values(c).reduce((n, x) => n + x, 0));
    });
  }, 250);
  let next = 0;
  let maxLagMs = 0;
  while (next < plan.length) {
    const elapsed = Date.now() - t0;
    const due: Scheduled[] = [];
    while (next < plan.length && plan[next]!.at <= elapsed) due.push(plan[next++]!);
    if (due.length > 0) {
      maxLagMs = Math.max(maxLagMs, elapsed - due[0]!.at);
      await Promise.all(
        due.map(async (s) => {
          const now = Date.now();
          s.fact.receivedAt = now;
          await facts.add(s.fact);
          if (s.approvalKey && !approvalAddedAt.has(s.approvalKey)) approvalAddedAt.set(s.approvalKey, now);
        }),
      );
    } else {
      await new Promise((r) => setTimeout(r, Math.max(1, Math.min(20, plan[next]!.at - elapsed))));
    }
  }
  const lastFactAt = Date.now();
  clearInterval(sampler);
  console.log(`facts added in ${round((lastFactAt - t0) / 1000)} s (worst lag behind schedule ${round(maxLagMs / 1000)} s); largest backlog of unreduced facts: ${maxFactBacklog}; load average ${loadAverages().join(' ')}`);

  // Converged when no job is pending and every parent shows what its final record renders.
  const states = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;
  let convergedAt: number | undefined;
  let notConverged = RELEASES;
  while (Date.now() - lastFactAt < CONVERGE_TIMEOUT_MS) {
    // Parents and replies still to send; settling old replies (removing buttons of pauses that are
    // over) comes after them and is not what this waits for.
    const [a, slackJobs] = await Promise.all([facts.queue.getJobCounts(...states), slackQueue.getJobs([...states])]);
    const pending = Object.values(a).reduce((n, c) => n + c, 0) + slackJobs.filter((j) => j.name !== 'settle').length;
    if (pending === 0) {
      notConverged = 0;
      for (const pipeline of config.pipelines) {
        const [record] = await store.list(pipeline.name, { includeFinished: true, limit: 1 });
        const shown = slack.transcript.messages(pipeline.channel);
        const ok = record !== undefined && shown.length === 1 && JSON.stringify(shown[0]!.blocks) === JSON.stringify(renderParent(record, pipeline).blocks);
        if (!ok) notConverged += 1;
      }
      if (notConverged === 0) {
        convergedAt = Date.now();
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }

  const latencies: number[] = [];
  let approvalReplies = 0;
  for (const pipeline of config.pipelines) {
    for (const parent of slack.transcript.messages(pipeline.channel)) {
      for (const reply of parent.replies) {
        const actions = (reply.blocks as { type: string; elements?: { value: string }[] }[]).find((b) => b.type === 'actions');
        if (!actions?.elements?.[0]) continue;
        const v = JSON.parse(actions.elements[0].value) as ButtonValue;
        const added = approvalAddedAt.get(`${v.p}|${v.ns}/${v.n}|${v.s}`);
        approvalReplies += 1;
        if (added !== undefined) latencies.push((reply.at - added) / 1000);
      }
    }
  }
  latencies.sort((x, y) => x - y);
  const slackCalls = [...slack.calls.values()].reduce((n, c) => n + c, 0);
  const surfaced429 = [...slack.rateLimited.values()].reduce((n, c) => n + c, 0);
  const threads = config.pipelines.reduce((n, p) => n + slack.transcript.messages(p.channel).length, 0);
  const byMethod = Object.fromEntries([...slack.calls.entries()].sort());
  console.log(`threads: ${threads} for ${RELEASES} releases; approval replies: ${approvalReplies} for ${approvalAddedAt.size} paused Rollouts`);
  console.log(`Slack calls: ${slackCalls} (${JSON.stringify(byMethod)}); a naive sender: ${plan.length} (one per fact)`);
  console.log(`calls per fact: ${round(slackCalls / plan.length, 3)}; 429s surfaced by Slack: ${surfaced429}`);
  console.log(`approval reply after the paused fact: p50 ${round(percentile(latencies, 50))} s, p99 ${round(percentile(latencies, 99))} s (target p99 ≤ 5 s)`);
  const queued = (await (metrics.registry.getSingleMetric('glidepath_slack_reply_seconds') as Histogram<'needs_person'>).get()).values
    .filter((v) => v.metricName === 'glidepath_slack_reply_seconds_bucket' && v.labels.needs_person === 'true')
    .map((v) => ({ le: String((v.labels as Record<string, unknown>).le), count: v.value }));
  const total = queued.find((v) => v.le === '+Inf')?.count ?? 0;
  const upTo = (p: number) => queued.find((v) => v.le !== '+Inf' && v.count >= total * p)?.le ?? '+Inf';
  console.log(`  of which in the Slack queue (reply job added → Slack accepted, bucket bounds): p50 ≤ ${upTo(0.5)} s, p99 ≤ ${upTo(0.99)} s`);
  console.log(
    convergedAt === undefined
      ? `NOT converged ${CONVERGE_TIMEOUT_MS / 1000} s after the last fact: ${notConverged} parents differ from their final state`
      : `every parent showed its final state ${round((convergedAt - lastFactAt) / 1000)} s after the last fact (target ≤ 60 s)`,
  );

  await glidepath.close();
  await slack.close();
  const cleanup = connectRedis(REDIS_URL, 'worker');
  await deleteKeysWithPrefix(cleanup, prefix);
  cleanup.disconnect();

  console.log(
    JSON.stringify({
      bench: 'storm',
      facts: plan.length,
      slackCalls,
      naiveCalls: plan.length,
      callsPerFact: round(slackCalls / plan.length, 4),
      surfaced429,
      approvalReplyP99S: round(percentile(latencies, 99)),
      convergeS: convergedAt === undefined ? null : round((convergedAt - lastFactAt) / 1000),
      loadStart: loadAtStart,
      loadEnd: loadAverages(),
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
