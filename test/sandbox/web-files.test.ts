/**
 * The sandbox page's images: a file shared into a thread through the stand-in's upload flow (the
 * real @slack/web-api client, as Glidepath's writer uploads a chart) is in the page's state as an
 * image of that reply, and the page's own server answers its URL with the uploaded PNG; an unknown
 * file or bytes that are not a PNG are refused with the reason. The browser drawing it is
 * browser-story.test.ts's.
 */
import { readFileSync } from 'node:fs';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { SignedSender } from '../../sandbox/slack/sender.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import type { PageState } from '../../sandbox/web/client/page-state.js';
import { startSandboxWeb, type SandboxWeb } from '../../sandbox/web/server.js';
import { readPngHeader } from '../slack/support/png.js';

const CHANNEL = 'C0SANDBOX1';
/** The analysis chart Glidepath uploaded in the chart test (docs/), a real 800×400 PNG. */
const PNG = readFileSync(new URL('../../docs/analysis-chart.png', import.meta.url));

let slack: SlackStandIn | undefined;
let web: SandboxWeb | undefined;
afterEach(async () => {
  await web?.close();
  await slack?.close();
  web = slack = undefined;
});

async function sandbox(): Promise<{ client: WebClient; ts: string; web: SandboxWeb }> {
  slack = await startSlackStandIn({ botToken: 'xoxb-web-files' });
  // Nothing here sends to Glidepath: the sender's URL is never called.
  const sender = new SignedSender({ url: 'http://127.0.0.1:9/slack/events', signingSecret: 'unused' });
  web = await startSandboxWeb({ slack, sender, you: { id: 'U0SANDBOX', name: 'you' }, channels: [{ id: CHANNEL, name: 'checkout-releases', topic: '' }] });
  const client = new WebClient('xoxb-web-files', { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  const parent = await client.chat.postMessage({ channel: CHANNEL, text: 'Release rel-1.30.0 — checkout' });
  return { client, ts: parent.ts!, web };
}

/** Glidepath's upload: an upload URL, the bytes POSTed to it, the share into the thread. */
async function share(client: WebClient, ts: string, bytes: Buffer, title: string, alt?: string): Promise<string> {
  const upload = await client.files.getUploadURLExternal({ filename: 'chart.png', length: bytes.length, ...(alt ? { alt_txt: alt } : {}) });
  expect((await fetch(upload.upload_url!, { method: 'POST', body: bytes })).status).toBe(200);
  await client.files.completeUploadExternal({ files: [{ id: upload.file_id!, title }], channel_id: CHANNEL, thread_ts: ts });
  return upload.file_id!;
}

describe("the sandbox page's shared images", () => {
  it('a chart shared into a thread is an image of that reply in the page, served from the page as the PNG uploaded', async () => {
    const { client, ts, web } = await sandbox();
    const id = await share(client, ts, PNG, 'success-rate Inconclusive — dev/shop/checkout-dev', 'success-rate measured 0.99 … 0.92 against result[0] >= 0.95');
    const state = (await (await fetch(`${web.url}state`)).json()) as PageState;
    const reply = state.items.find((i) => i.files?.length);
    expect(reply).toMatchObject({ channel: CHANNEL, threadTs: ts, files: [{ id, title: 'success-rate Inconclusive — dev/shop/checkout-dev', alt: 'success-rate measured 0.99 … 0.92 against result[0] >= 0.95' }] });
    const served = await fetch(new URL(reply!.files![0]!.url, web.url));
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await served.arrayBuffer());
    expect(bytes.equals(PNG)).toBe(true);
    expect(readPngHeader(bytes)).toMatchObject({ width: 800, height: 400 });
  });

  it('an upload without alt text is described by its title; an unknown file and bytes that are not a PNG are refused with the reason', async () => {
    const { client, ts, web } = await sandbox();
    await share(client, ts, PNG, 'Release rel-1.29.0 · checkout');
    const notPng = await share(client, ts, Buffer.from('GIF89a, not a PNG'), 'a GIF');
    const state = (await (await fetch(`${web.url}state`)).json()) as PageState;
    expect(state.items.flatMap((i) => i.files ?? []).map((f) => [f.title, f.alt])).toEqual([
      ['Release rel-1.29.0 · checkout', 'Release rel-1.29.0 · checkout'],
      ['a GIF', 'a GIF'],
    ]);
    const refused = await fetch(`${web.url}files/${notPng}`);
    expect(refused.status).toBe(415);
    expect(await refused.json()).toMatchObject({ ok: false, error: `file ${notPng} is not a PNG: the page shows PNG images only` });
    const unknown = await fetch(`${web.url}files/F0NOSUCHFILE`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ ok: false, error: 'no shared file F0NOSUCHFILE in this sandbox' });
    expect((await fetch(`${web.url}files/..%2Fstate`)).status).toBe(404);
  });
});
