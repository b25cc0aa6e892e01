/**
 * A local Slack in the browser for `npm run sandbox`: serves the page (sandbox/web/index.html,
 * style.css and the page's TypeScript from client/, transpiled once at start, no bundler), sends
 * it the channels, threads, answers and App Home as server-sent events, and turns what the person
 * does (a slash command, a click, a dialog) into the SIGNED request Slack would send Glidepath.
 * Bound to 127.0.0.1; only JSON posts from its own page are taken (a cross-site form cannot send
 * application/json, and the Host must be this server's).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import ts from 'typescript';
import { z } from 'zod';
import { HttpError } from '../../src/http/http-error.js';
import { readBody, sendJson, sendText } from '../../src/http/io.js';
import type { SignedSender } from '../slack/sender.js';
import type { PageHooks } from '../story/actor.js';
import type { SlackStandIn } from '../slack/server.js';
import type { ActAnswer, Block, PageChannel, PageItem } from './client/page-state.js';
import { PageLedger } from './ledger.js';

export interface SandboxWebOptions {
  slack: SlackStandIn;
  /** Signs with Glidepath's signing secret and posts to its /slack/events. */
  sender: SignedSender;
  /** The person at the page: the Slack user every request comes from. */
  you: { id: string; name: string };
  users?: Record<string, string>;
  channels: PageChannel[];
  /** 0 picks a free port. */
  port?: number;
}

export interface SandboxWeb {
  url: string;
  /** For the story: its commands and clicks show in the page where a person's would, its dialogs close when it answers them. */
  hooks: PageHooks;
  /** What the story waits for you to do, at the top of the page (empty: nothing). */
  setWaiting(lines: string[]): void;
  close(): Promise<void>;
}

const BODY_LIMIT = 64 * 1024;
const COMMAND = '/glidepath';
const HOME_CHANNEL = 'D0SANDBOXHOME';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CommandBody = z.object({ channel: z.string().min(1).max(40), text: z.string().max(4000) });
const ClickBody = z.object({ key: z.string().min(1).max(80), actionId: z.string().min(1).max(255), value: z.string().max(2000) });
const ViewBody = z.object({
  modalId: z.string().min(1).max(40),
  action: z.enum(['submit', 'close']),
  values: z.record(z.string(), z.record(z.string(), z.string().max(3000))).optional(),
});

const HERE = new URL('.', import.meta.url);

/** One channel per pipeline channel, named after the pipelines that post there. */
export function pipelineChannels(pipelines: readonly { name: string; channel: string }[]): PageChannel[] {
  const byChannel = new Map<string, string[]>();
  for (const p of pipelines) byChannel.set(p.channel, [...(byChannel.get(p.channel) ?? []), p.name]);
  return [...byChannel].map(([id, names]) => ({ id, name: `${names[0]}-releases`, topic: `Release threads of the ${names.join(', ')} pipeline${names.length > 1 ? 's' : ''}` }));
}

/** SANDBOX_WEB_PORT, default 3001; with PORT=0 (a free port for Glidepath) the page takes a free one too. */
export function sandboxWebPort(env: NodeJS.ProcessEnv): number {
  if (env.SANDBOX_WEB_PORT !== undefined) return Number(env.SANDBOX_WEB_PORT);
  return env.PORT === '0' ? 0 : 3001;
}

function readAsset(name: string): string {
  return readFileSync(new URL(name, HERE), 'utf8');
}

/** The page's modules, each transpiled alone (type-only imports vanish): no bundler, no type-check at start. */
function transpileClient(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(new URL('client/', HERE)).filter((f) => f.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(readAsset(`client/${file}`), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
      fileName: file,
    });
    out.set(`/${file.replace(/\.ts$/, '.js')}`, outputText);
  }
  return out;
}

/** The button as the page showed it, or undefined when the item no longer carries it. */
function findButton(item: PageItem, actionId: string, value: string): { blockId?: string } | undefined {
  for (const block of item.blocks) {
    const elements = block.type === 'actions' && Array.isArray(block.elements) ? (block.elements as Block[]) : block.accessory ? [block.accessory as Block] : [];
    for (const e of elements) {
      if (e.type === 'button' && e.action_id === actionId && (e.value ?? '') === value) return typeof block.block_id === 'string' ? { blockId: block.block_id } : {};
    }
  }
  return undefined;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'invalid_json', 'the body is not JSON');
  }
}

export async function startSandboxWeb(options: SandboxWebOptions): Promise<SandboxWeb> {
  const { slack, sender, you } = options;
  const ledger = new PageLedger({ slack, you, users: { [you.id]: you.name, ...options.users }, channels: options.channels });
  const assets = new Map<string, { type: string; body: string }>([
    ['/', { type: 'text/html; charset=utf-8', body: readAsset('index.html') }],
    ['/style.css', { type: 'text/css; charset=utf-8', body: readAsset('style.css') }],
    ...[...transpileClient()].map(([path, body]) => [path, { type: 'text/javascript; charset=utf-8', body }] as const),
  ]);
  const streams = new Set<ServerResponse>();
  let pending: NodeJS.Timeout | undefined;
  let port = 0;

  const push = (): void => {
    pending = undefined;
    const data = `event: state\ndata: ${JSON.stringify(ledger.snapshot())}\n\n`;
    for (const res of streams) res.write(data);
  };
  /** Changes come in bursts (a reply, then the parent's edit): one update per burst. */
  const changed = (): void => {
    ledger.observe();
    pending ??= setTimeout(push, 30);
  };
  const unsubscribe = slack.transcript.onChange(changed);
  const keepAlive = setInterval(() => {
    for (const res of streams) res.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();

  const channelIds = (): Set<string> => new Set(ledger.snapshot().channels.map((c) => c.id));

  /** Glidepath acks within Slack's 3 s; anything but a 200 is what Slack would show as a failed command. */
  const checkAck = (what: string, status: number, body: string): ActAnswer => (status === 200 ? { ok: true } : { ok: false, error: `${what} failed: Glidepath answered HTTP ${status} ${body.slice(0, 200)}` });

  const command = async (body: unknown): Promise<ActAnswer> => {
    const { channel, text } = CommandBody.parse(body);
    if (!channelIds().has(channel)) throw new HttpError(400, 'unknown_channel', `no channel ${channel} in this sandbox`);
    const typed = text.trim();
    const [word = '', ...rest] = typed.split(/\s+/);
    if (!typed.startsWith('/')) {
      ledger.note(channel, `Only slash commands reach Glidepath from this page (messages to the channel are not sent anywhere). Try \`${COMMAND} help\`.`, typed.slice(0, 100));
    } else if (word !== COMMAND) {
      ledger.note(channel, `\`${word.slice(0, 60)}\` is not a valid command. Glidepath's command is \`${COMMAND}\`: try \`${COMMAND} help\`.`, typed.slice(0, 100));
    } else {
      const responseUrl = ledger.responseUrl({ kind: 'command', channel, command: typed });
      const sent = await sender.slashCommand({ command: COMMAND, text: rest.join(' '), userId: you.id, channelId: channel, responseUrl, triggerId: ledger.triggerId(channel) });
      const answer = checkAck(typed, sent.status, sent.body);
      if (!answer.ok) ledger.note(channel, `:warning: ${answer.error}`, typed);
    }
    changed();
    return { ok: true };
  };

  const click = async (body: unknown): Promise<ActAnswer> => {
    const { key, actionId, value } = ClickBody.parse(body);
    const item = ledger.snapshot().items.find((i) => i.key === key);
    const button = item && findButton(item, actionId, value);
    if (!item || !button) throw new HttpError(409, 'button_gone', 'that button is no longer on the message (it changed since the page drew it); nothing was sent');
    const responseUrl = ledger.responseUrl({ kind: 'click', channel: item.channel, key, ...(item.threadTs ? { threadTs: item.threadTs } : {}) });
    const sent = await sender.blockAction({
      actionId,
      value,
      userId: you.id,
      channelId: item.channel,
      // Only the bot's own messages have a Slack ts; the page's other items get a stand-in one.
      messageTs: item.key.startsWith('m:') ? item.key.slice(2) : `0000000000.${String(item.order).padStart(6, '0')}`,
      ...(item.threadTs ? { threadTs: item.threadTs } : {}),
      responseUrl,
      ...(button.blockId ? { blockId: button.blockId } : {}),
      messageText: item.text,
      messageBlocks: item.blocks,
      ephemeral: item.kind === 'ephemeral' || item.kind === 'slackbot',
      triggerId: ledger.triggerId(item.channel),
    });
    return checkAck('the click', sent.status, sent.body);
  };

  const view = async (body: unknown): Promise<ActAnswer> => {
    const { modalId, action, values } = ViewBody.parse(body);
    const modal = ledger.modal();
    if (!modal || modal.id !== modalId) throw new HttpError(409, 'view_closed', 'that dialog is no longer open; nothing was sent');
    // Slack tells the app about a closed dialog only when it asked (notify_on_close); Glidepath does not.
    if (action === 'close') {
      ledger.closeModal(modalId);
      changed();
      return { ok: true };
    }
    const state = Object.fromEntries(Object.entries(values ?? {}).map(([block, actions]) => [block, Object.fromEntries(Object.entries(actions).map(([id, v]) => [id, { type: 'plain_text_input', value: v }]))]));
    const sent = await sender.viewSubmission({ userId: you.id, view: { ...modal.view, state: { values: state } } });
    const answer = checkAck('the dialog', sent.status, sent.body);
    if (!answer.ok) return answer;
    const reply = sent.body ? (parseJson(sent.body) as { response_action?: string; errors?: Record<string, string> }) : {};
    if (reply.response_action === 'errors') return { ok: false, error: 'the dialog has errors', errors: reply.errors ?? {} };
    ledger.closeModal(modalId);
    changed();
    return { ok: true };
  };

  const home = async (): Promise<ActAnswer> => {
    const sent = await sender.event({ type: 'app_home_opened', user: you.id, channel: HOME_CHANNEL, tab: 'home', event_ts: `${Date.now() / 1000}` });
    return checkAck('opening the App Home', sent.status, sent.body);
  };

  const actions: Record<string, (body: unknown) => Promise<ActAnswer>> = { '/act/command': command, '/act/click': click, '/act/view': view, '/act/home': home };

  /** A shared image's bytes, as uploaded to the stand-in (bounded by its body limit); only PNGs are served, as image/png. */
  const sendFile = (res: ServerResponse, id: string): void => {
    const file = /^F[A-Z0-9]{1,20}$/.test(id) ? slack.transcript.file(id) : undefined;
    if (!file) throw new HttpError(404, 'file_not_found', `no shared file ${id.slice(0, 40)} in this sandbox`);
    if (!file.bytes.subarray(0, 8).equals(PNG_SIGNATURE)) throw new HttpError(415, 'not_png', `file ${id} is not a PNG: the page shows PNG images only`);
    // A file id's bytes never change: the page's redraws reuse the one it fetched.
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.bytes.length, 'cache-control': 'private, max-age=86400, immutable', 'x-content-type-options': 'nosniff' });
    res.end(file.bytes);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) throw new HttpError(421, 'wrong_host', `open the page at http://127.0.0.1:${port}/`);
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    if (req.method === 'GET' && path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(`event: state\ndata: ${JSON.stringify(ledger.snapshot())}\n\n`);
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'GET' && path === '/state') return sendJson(res, 200, ledger.snapshot());
    if (req.method === 'GET' && path.startsWith('/files/')) return sendFile(res, path.slice(7));
    const asset = req.method === 'GET' ? assets.get(path) : undefined;
    if (asset) {
      res.writeHead(200, {
        'content-type': asset.type,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        // Nothing on the page may run or load from elsewhere, whatever a message contains.
        'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
      });
      res.end(asset.body);
      return;
    }
    const act = actions[path];
    if (req.method === 'POST' && act) {
      if (!req.headers['content-type']?.startsWith('application/json')) throw new HttpError(415, 'json_only', 'post application/json');
      const body = parseJson((await readBody(req, BODY_LIMIT)).toString('utf8') || '{}');
      const answer = await act(body);
      return sendJson(res, answer.ok ? 200 : 502, answer);
    }
    throw new HttpError(404, 'not_found', `nothing at ${req.method ?? ''} ${path}`);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      if (err instanceof HttpError) return sendJson(res, err.status, { ok: false, error: err.message });
      if (err instanceof z.ZodError) return sendJson(res, 400, { ok: false, error: `bad request: ${err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}` });
      return sendText(res, 500, `the sandbox page server failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/`,
    hooks: {
      responseUrl: (origin) => ledger.responseUrl(origin),
      triggerId: (channel) => ledger.triggerId(channel),
      dialogAnswered: (v) => {
        ledger.viewAnswered(v);
        changed();
      },
      dialogOpen: (v) => ledger.viewOpen(v),
    },
    setWaiting: (lines) => {
      ledger.setWaiting(lines);
      changed();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        unsubscribe();
        clearInterval(keepAlive);
        if (pending) clearTimeout(pending);
        for (const res of streams) res.end();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
