/**
 * The stand-in's file upload flow, driven by the real @slack/web-api client as the writer drives
 * it: an upload URL on the stand-in, the bytes POSTed to it, the completion sharing the file into
 * a thread with its alt text; and the refusals Slack gives (bytes not uploaded, wrong length).
 */
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../../sandbox/slack/server.js';

let standIn: SlackStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

const BYTES = Buffer.from('\x89PNG\r\n\x1a\nnot really an image, but bytes', 'latin1');

async function thread(): Promise<{ slack: SlackStandIn; client: WebClient; ts: string }> {
  const slack = (standIn = await startSlackStandIn({ botToken: 'xoxb-test' }));
  const client = new WebClient('xoxb-test', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  const parent = await client.chat.postMessage({ channel: 'C0FILES', text: 'a release' });
  return { slack, client, ts: parent.ts! };
}

describe('the Slack stand-in serves the upload flow', () => {
  it('getUploadURLExternal, POST the bytes, completeUploadExternal: the file is shared into the thread, once, with its alt text', async () => {
    const { slack, client, ts } = await thread();
    const args = { filename: 'chart.png', length: BYTES.length, alt_txt: 'a chart of success-rate' };
    const upload = await client.files.getUploadURLExternal(args);
    expect(upload.upload_url!.startsWith(slack.url)).toBe(true);
    const posted = await fetch(upload.upload_url!, { method: 'POST', body: BYTES });
    expect(posted.status).toBe(200);
    expect(await posted.text()).toBe(`OK - ${BYTES.length}`);
    const files = [{ id: upload.file_id!, title: 'success-rate' }] as [{ id: string; title: string }];
    const done = await client.files.completeUploadExternal({ files, channel_id: 'C0FILES', thread_ts: ts });
    expect(done.files?.[0]?.id).toBe(upload.file_id);
    // Completed again (a retry after a lost answer): nothing more is shared.
    await client.files.completeUploadExternal({ files, channel_id: 'C0FILES', thread_ts: ts });
    const [parent] = slack.transcript.messages('C0FILES');
    const shares = parent!.replies.filter((r) => r.files);
    expect(shares).toHaveLength(1);
    expect(shares[0]!.files![0]).toMatchObject({ id: upload.file_id, name: 'chart.png', title: 'success-rate', altText: 'a chart of success-rate' });
    expect(shares[0]!.files![0]!.bytes.equals(BYTES)).toBe(true);
    expect(JSON.stringify(slack.transcript.toJSON())).not.toContain('not really an image'); // the JSON names files, it does not carry them
  });

  it('refuses a completion before the bytes, bytes of another length, and fails the first POST when told to', async () => {
    const { slack, client, ts } = await thread();
    const upload = await client.files.getUploadURLExternal({ filename: 'chart.png', length: BYTES.length });
    const files = [{ id: upload.file_id!, title: 't' }] as [{ id: string; title: string }];
    await expect(client.files.completeUploadExternal({ files, channel_id: 'C0FILES', thread_ts: ts })).rejects.toMatchObject({ data: { error: 'upload_not_complete' } });
    expect((await fetch(upload.upload_url!, { method: 'POST', body: BYTES.subarray(1) })).status).toBe(400);
    slack.injectFaults('files.upload', 1, { kind: 'http', status: 500 });
    expect((await fetch(upload.upload_url!, { method: 'POST', body: BYTES })).status).toBe(500);
    expect((await fetch(upload.upload_url!, { method: 'POST', body: BYTES })).status).toBe(200);
    await client.files.completeUploadExternal({ files, channel_id: 'C0FILES', thread_ts: ts });
    expect(slack.transcript.messages('C0FILES')[0]!.replies.filter((r) => r.files)).toHaveLength(1);
  });
});
