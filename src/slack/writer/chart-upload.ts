/**
 * The charts of a failed (or inconclusive) analysis, uploaded into the reply's thread with
 * Slack's upload flow: `files.getUploadURLExternal` per image, a POST of its bytes to the URL it
 * returns, then one `files.completeUploadExternal` that shares them all (channel_id, thread_ts).
 * A chart job runs once its reply is posted; the writer's own calls, budgets and retries carry it
 * (ChartCalls), so a failed upload retries with backoff, alone, and the reply is never posted
 * twice. Once: a claim while uploading, a mark when shared, and the file ids kept before the
 * completion, so a retry after an answer that was lost completes the same files, not new ones.
 * The release timeline travels the same way, once per release (its id is the release's, not a
 * reply's), after the reply that said the release completed or failed.
 */
import type { WebClient } from '@slack/web-api';
import type { FilesCompleteUploadExternalArguments } from '@slack/web-api';
import { analysisCharts } from '../render/analysis-chart.js';
import { releaseTimeline, timelineObservedNothing, timelineUsers } from '../render/release-timeline.js';
import type { ThreadReplyEffect } from '../render/types.js';
import type { PipelineConfig } from '../../config/file.js';
import type { ReleaseRecord, ReplyKind } from '../../releases/record/record.js';
import type { Queue } from 'bullmq';
import { PRIORITY, chartJobId, type ChartJob, type ReplyProduced, type SlackJob } from './jobs.js';
import { mayHaveLanded } from './slack-errors.js';
import type { ThreadStore } from './threads.js';
import { FencedSlackError } from './writer-fence.js';

/**
 * The image renderers load with the first chart a process draws: echarts alone adds ~45 MB to a
 * process's memory, which the processes that never draw one (ingest, the reducer) need not carry.
 */
const analysisImages = () => import('../render/analysis-chart-image.js');
const timelineImages = () => import('../render/release-timeline-image.js');

/** What the writer lends a chart job: its one way to call Slack, spend a budget, wait and retry. */
export interface ChartCalls {
  call<T>(method: string, budget: string, send: () => Promise<T>, onError?: (err: unknown) => Promise<void>): Promise<T>;
  /** A routine post's share of the channel's budget (a file share is a message in the channel). */
  spend(budget: string): Promise<void>;
  /** Another writer holds the chart: try again shortly. */
  busy(): Promise<never>;
  retryLater(method: string, error: string, cause: unknown): Promise<never>;
}

export interface ChartUploadDeps {
  client: WebClient;
  threads: ThreadStore;
  lockMs: number;
  /** The POST of the bytes to the upload URL (default 10 s). */
  uploadTimeoutMs?: number;
  /** The release as stored when the job runs: what the timeline is drawn from. */
  record: ReleaseRecord;
}

/** The id the release timeline is marked, claimed and kept under: one per release. */
export const TIMELINE_CHART_ID = 'chart:timeline';

/** Replies that say a release failed, when the record that emitted them had failed (or was aborted). */
const FAILURE_REPLIES: readonly ReplyKind[] = ['degraded', 'analysis-failed', 'aborted', 'sync-failed', 'promotion-failed', 'verification-failed'];

/** The reply ended the release: it said Complete, or it is a failure's reply of a record that had failed. */
export function endsRelease(effect: ThreadReplyEffect, produced: ReplyProduced | undefined): boolean {
  if (effect.kind === 'release-complete') return true;
  return FAILURE_REPLIES.includes(effect.kind) && (produced?.status === 'Failed' || produced?.status === 'Aborted');
}

interface ChartImage {
  filename: string;
  title: string;
  altText: string;
  /** Drawn when it is uploaded (a retry that finds the files kept draws nothing). */
  png(): Promise<Uint8Array>;
}

/** The id the chart of a reply is marked, claimed and kept under (beside the reply's own). */
export function chartId(effect: ThreadReplyEffect): string {
  return `chart:${effect.id}`;
}

/** Replies whose effect carries failing metrics get charts: the failed analysis and the paused (inconclusive) one. */
export function repliesWithCharts(effect: ThreadReplyEffect): boolean {
  return (effect.kind === 'analysis-failed' || effect.kind === 'paused') && (effect.detail.metrics?.some((m) => (m.points?.length ?? 0) > 0) ?? false);
}

/**
 * Once the reply is posted: its charts' job, once per reply (the job id), a no-op for replies
 * without numeric measurements; and the release timeline's, once per release, after the reply
 * that ended it, unless the pipeline says `charts: false`.
 */
export async function queueCharts(queue: Queue<SlackJob>, record: { pipeline: string; releaseId: string }, effect: ThreadReplyEffect, pipeline: PipelineConfig, produced: ReplyProduced | undefined): Promise<void> {
  if (repliesWithCharts(effect)) {
    const job: ChartJob = { type: 'chart', pipeline: record.pipeline, releaseId: record.releaseId, effect };
    await queue.add('chart', job, { jobId: chartJobId(record.pipeline, record.releaseId, effect.id), priority: PRIORITY.chart });
  }
  if (pipeline.charts !== false && endsRelease(effect, produced)) {
    const job: ChartJob = { type: 'chart', pipeline: record.pipeline, releaseId: record.releaseId, effect, timeline: true };
    await queue.add('chart', job, { jobId: chartJobId(record.pipeline, record.releaseId, TIMELINE_CHART_ID), priority: PRIORITY.chart });
  }
}

/** The names the timeline labels who acted with; a name Slack does not give is shown as the user id. */
async function userNames(client: WebClient, ids: readonly string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  await Promise.all(
    ids.map(async (id) => {
      const user = await client.users.info({ user: id }).then((r) => r.user, () => undefined);
      const name = user?.profile?.display_name || user?.real_name || user?.name;
      if (name) names.set(id, name);
    }),
  );
  return names;
}

async function imagesOf(deps: ChartUploadDeps, job: ChartJob): Promise<ChartImage[]> {
  if (job.timeline) {
    const chart = releaseTimeline(deps.record, await userNames(deps.client, timelineUsers(deps.record)));
    // Nothing heard between the first fact and healthy: no image of empty bars.
    return timelineObservedNothing(chart) ? [] : [{ filename: chart.filename, title: chart.title, altText: chart.altText, png: async () => (await timelineImages()).releaseTimelinePng(chart) }];
  }
  return analysisCharts(job.effect.detail.metrics, where(job.effect)).map((chart) => ({ filename: chart.filename, title: chart.title, altText: chart.altText, png: async () => (await analysisImages()).analysisChartPng(chart) }));
}

function where(effect: ThreadReplyEffect): string | undefined {
  const t = effect.target;
  return t ? `${t.cluster}/${t.namespace}/${t.name}` : undefined;
}

export async function uploadCharts(deps: ChartUploadDeps, job: ChartJob, calls: ChartCalls): Promise<void> {
  const { threads } = deps;
  const { pipeline, releaseId, effect } = job;
  const id = job.timeline ? TIMELINE_CHART_ID : chartId(effect);
  if (await threads.replied(pipeline, releaseId, id)) return;
  const thread = await threads.get(pipeline, releaseId);
  if (!thread) return;
  // Nothing numeric to draw (or no stage started): nothing to upload, ever.
  const charts = await imagesOf(deps, job);
  if (charts.length === 0) return;
  const claim = await threads.claimReply(pipeline, releaseId, id, deps.lockMs);
  if (!claim) return calls.busy();
  try {
    if (await threads.replied(pipeline, releaseId, id)) return;
    let files = await threads.chartFiles(pipeline, releaseId, id);
    if (!files || files.length === 0) {
      files = [];
      for (const chart of charts) {
        const png = await chart.png();
        // Slack documents `alt_txt`; the client's types name it `alt_text`: the documented name is sent.
        const args = { filename: chart.filename, length: png.length, alt_txt: chart.altText };
        const upload = await calls.call('files.getUploadURLExternal', 'files', () => deps.client.files.getUploadURLExternal(args));
        if (!upload.upload_url || !upload.file_id) throw new Error('files.getUploadURLExternal answered without upload_url or file_id');
        await postBytes(upload.upload_url, png, deps.uploadTimeoutMs ?? 10_000, calls);
        files.push({ id: upload.file_id, title: chart.title });
      }
      await threads.saveChartFiles(pipeline, releaseId, id, files);
    }
    const budget = `post:${thread.channel}`;
    await calls.spend(budget);
    if (!(await threads.holdsReply(pipeline, releaseId, id, claim, deps.lockMs))) throw new FencedSlackError(`the claim on ${id} expired before files.completeUploadExternal`);
    const shared = files as FilesCompleteUploadExternalArguments['files'];
    await calls.call('files.completeUploadExternal', budget, () => deps.client.files.completeUploadExternal({ files: shared, channel_id: thread.channel, thread_ts: thread.ts }), async (err) => {
      // Slack said no (an expired upload, a refusal): the retry uploads afresh. An answer that was lost: the same files again.
      if (!mayHaveLanded(err)) await threads.saveChartFiles(pipeline, releaseId, id, []);
    });
    await threads.markReplied(pipeline, releaseId, id);
  } finally {
    await threads.releaseReply(pipeline, releaseId, id, claim);
  }
}

/** The bytes to the upload URL: not a Web API method, so no client call; any failure retries with the writer's backoff. */
async function postBytes(url: string, png: Uint8Array, timeoutMs: number, calls: ChartCalls): Promise<void> {
  let status: number;
  try {
    const res = await fetch(url, { method: 'POST', body: png, headers: { 'content-type': 'application/octet-stream' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    status = res.status;
  } catch (err) {
    return calls.retryLater('files.upload', (err as Error).name === 'TimeoutError' ? 'upload_timeout' : 'upload_unreachable', err);
  }
  if (status < 200 || status >= 300) return calls.retryLater('files.upload', `upload_http_${status}`, new Error(`the upload URL answered HTTP ${status}`));
}
