/**
 * A Slack stand-in over real HTTP: the Web API methods Glidepath calls, the response_url
 * endpoints it hands out, Slack's limits (429 + Retry-After, invalid_blocks, msg_blocks_too_long)
 * and a transcript tests read. The real @slack/web-api and @slack/bolt talk to it through
 * `slackApiUrl`; Bolt's Socket Mode receiver also through apps.connections.open and the
 * WebSocket it hands out (socket-mode.ts).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../src/http/io.js';
import { FileUploads } from './files.js';
import { conversationsHistory, conversationsReplies } from './history.js';
import { RateLimiter, SLACK_LIMITS, type StandInLimits } from './rate-limits.js';
import { SocketModeStandIn, STAND_IN_APP_TOKEN, type SocketModeOptions } from './socket-mode.js';
import { Transcript, type MessageMetadata, type TranscriptMessage } from './transcript.js';
import { checkMessage } from './validate-blocks.js';

export interface SlackStandInOptions {
  botToken?: string;
  teamId?: string;
  botUserId?: string;
  botId?: string;
  /** When set, only these channels exist (others answer channel_not_found). */
  channels?: string[];
  /** Channels the bot is not a member of (not_in_channel). */
  notInChannel?: string[];
  /** `email`: on the profile, as users.info shows it to a token with users:read.email. */
  users?: Record<string, { name: string; real_name?: string; is_admin?: boolean; deleted?: boolean; email?: string }>;
  usergroups?: Record<string, string[]>;
  limits?: StandInLimits;
  now?: () => number;
  port?: number;
  /** The app-level token apps.connections.open accepts (default STAND_IN_APP_TOKEN). */
  appToken?: string;
  /** Socket Mode timing (ack timeout, retries, pings); see socket-mode.ts. */
  socketMode?: Omit<SocketModeOptions, 'appToken' | 'team' | 'onCommandAnswer'>;
}

/**
 * A canned answer for the next calls of a method (fault injection). The first four refuse the
 * call; the `accepted-*` ones and `slow` do what the method does (the message is stored) and
 * then fail the answer, as Slack sometimes does: the client cannot tell whether it worked.
 */
export type Fault =
  | { kind: 'http'; status: number }
  | { kind: 'rate-limited'; retryAfterSeconds: number }
  | { kind: 'error'; error: string }
  | { kind: 'drop-connection' }
  /** Stores the message, then answers with this HTTP status (Slack's 500 after accepting). */
  | { kind: 'accepted-then-http'; status: number }
  /** Stores the message, then drops the connection without an answer. */
  | { kind: 'accepted-then-drop' }
  /** Stores the message, then answers only after `delayMs` (past the client's timeout). */
  | { kind: 'slow'; delayMs: number };

type Params = Record<string, unknown>;
type Answer = { status?: number; headers?: Record<string, string>; body: Record<string, unknown> };

export interface SlackStandIn {
  url: string;
  /** Give this to WebClient / Bolt as `slackApiUrl`. */
  apiUrl: string;
  transcript: Transcript;
  /** Calls received per method, including rejected ones. */
  calls: Map<string, number>;
  /** 429 answers per method. */
  rateLimited: Map<string, number>;
  setLimits(limits: StandInLimits): void;
  /** The next `count` calls of `method` meet `fault`; `files.upload` is the POST of bytes to an upload URL. */
  injectFaults(method: string, count: number, fault: Fault): void;
  /** Every API method answers 503 for the next `ms` (stand-in clock); 0 ends an outage now. */
  outage(ms: number): void;
  /** API calls refused by an outage, per method. */
  outageRefused: Map<string, number>;
  responseUrl(): string;
  /** Socket Mode: sends events, slash commands and interactions over the app's WebSocket and awaits the acks. */
  socketMode: SocketModeStandIn;
  close(): Promise<void>;
}

/** Far above any message Slack accepts (its own checks answer those); only a runaway body is refused. */
const BODY_LIMIT = 2 * 1024 * 1024;

const JSON_FIELDS = new Set(['blocks', 'view', 'attachments', 'metadata', 'files']);

/** WebClient sends form fields with objects as JSON strings; some callers send JSON bodies. */
function parseParams(raw: string, contentType: string | undefined): Params {
  if (contentType?.includes('application/json')) return raw ? (JSON.parse(raw) as Params) : {};
  const out: Params = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    if (JSON_FIELDS.has(k) && (v.startsWith('[') || v.startsWith('{'))) {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // Left as a string: the method's validation answers invalid_blocks / invalid_arguments.
      }
    }
    out[k] = v;
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export async function startSlackStandIn(options: SlackStandInOptions = {}): Promise<SlackStandIn> {
  const botToken = options.botToken ?? 'xoxb-stand-in';
  const teamId = options.teamId ?? 'T0STANDIN';
  const botUserId = options.botUserId ?? 'U0GLIDEPATH';
  const botId = options.botId ?? 'B0GLIDEPATH';
  const now = options.now ?? Date.now;
  const limiter = new RateLimiter(options.limits ?? SLACK_LIMITS, now);
  const transcript = new Transcript();
  const calls = new Map<string, number>();
  const rateLimited = new Map<string, number>();
  const faults = new Map<string, { count: number; fault: Fault }[]>();
  const responseIds = new Set<string>();
  const outageRefused = new Map<string, number>();
  let outageUntil = 0;
  let base = '';
  const socketMode = new SocketModeStandIn(
    {
      ...options.socketMode,
      appToken: options.appToken ?? STAND_IN_APP_TOKEN,
      team: { teamId },
      // Slack shows a slash command's ack message to the person who typed it.
      onCommandAnswer: (command, answer) =>
        transcript.ephemerals.push({ channel: command.channel_id ?? '', user: command.user_id ?? '', text: typeof answer.text === 'string' ? answer.text : '', blocks: Array.isArray(answer.blocks) ? answer.blocks : [] }),
    },
    () => base,
  );

  const channelProblem = (channel: string | undefined): string | undefined => {
    if (!channel) return 'channel_not_found';
    if (options.channels && !options.channels.includes(channel)) return 'channel_not_found';
    if (!options.channels && !/^[CGD][A-Z0-9]+$/.test(channel)) return 'channel_not_found';
    if (options.notInChannel?.includes(channel)) return 'not_in_channel';
    return undefined;
  };
  const uploads = new FileUploads(transcript, () => base, now, channelProblem, botUserId);
  const blocksOf = (p: Params) => (Array.isArray(p.blocks) ? (p.blocks as unknown[]) : []);
  /** Slack keeps `metadata` only when it has an event_type and an object payload; invalid metadata is invalid_metadata_format. */
  const metadataOf = (p: Params): { metadata?: MessageMetadata; problem?: string } => {
    if (p.metadata === undefined || p.metadata === '') return {};
    const m = p.metadata as Partial<MessageMetadata> | string;
    if (typeof m !== 'object' || typeof m.event_type !== 'string' || m.event_type === '' || typeof m.event_payload !== 'object' || m.event_payload === null) {
      return { problem: 'invalid_metadata_format' };
    }
    return { metadata: { event_type: m.event_type, event_payload: m.event_payload } };
  };

  const methods: Record<string, (p: Params) => Answer> = {
    'auth.test': () => ({
      body: { url: 'https://stand-in.slack.test/', team: 'Stand-in', user: 'glidepath', team_id: teamId, user_id: botUserId, bot_id: botId },
    }),
    'chat.postMessage': (p) => {
      const channel = str(p.channel);
      const { metadata, problem: badMetadata } = metadataOf(p);
      const problem = channelProblem(channel) ?? checkMessage(str(p.text), p.blocks) ?? badMetadata;
      if (problem || !channel) return { body: { ok: false, error: problem } };
      const threadTs = str(p.thread_ts);
      const ts = transcript.nextTs(now());
      const message: TranscriptMessage = {
        ts,
        channel,
        user: botUserId,
        text: str(p.text) ?? '',
        blocks: blocksOf(p),
        at: now(),
        edits: [],
        replies: [],
        ...(threadTs ? { threadTs } : {}),
        ...(metadata ? { metadata } : {}),
      };
      if (threadTs) {
        const parent = transcript.messages(channel).find((m) => m.ts === threadTs);
        if (!parent) return { body: { ok: false, error: 'thread_not_found' } };
        parent.replies.push(message);
      } else {
        const list = transcript.channels.get(channel) ?? [];
        list.push(message);
        transcript.channels.set(channel, list);
      }
      return { body: { channel, ts, message: { ts, text: message.text, blocks: message.blocks } } };
    },
    'chat.update': (p) => {
      const channel = str(p.channel);
      const { metadata, problem: badMetadata } = metadataOf(p);
      const problem = channelProblem(channel) ?? checkMessage(str(p.text), p.blocks) ?? badMetadata;
      if (problem || !channel) return { body: { ok: false, error: problem } };
      const message = transcript.find(channel, str(p.ts) ?? '');
      if (!message) return { body: { ok: false, error: 'message_not_found' } };
      message.edits.push({ text: message.text, blocks: message.blocks, at: message.at });
      message.text = str(p.text) ?? '';
      message.blocks = blocksOf(p);
      message.at = now();
      if (metadata) message.metadata = metadata;
      return { body: { channel, ts: message.ts, text: message.text } };
    },
    'chat.postEphemeral': (p) => {
      const channel = str(p.channel);
      const problem = channelProblem(channel) ?? checkMessage(str(p.text), p.blocks);
      if (problem || !channel) return { body: { ok: false, error: problem } };
      const user = str(p.user);
      if (!user) return { body: { ok: false, error: 'user_not_found' } };
      const threadTs = str(p.thread_ts);
      transcript.ephemerals.push({ channel, user, text: str(p.text) ?? '', blocks: blocksOf(p), ...(threadTs ? { threadTs } : {}) });
      return { body: { message_ts: transcript.nextTs(now()) } };
    },
    'views.publish': (p) => {
      const user = str(p.user_id);
      const view = p.view as { type?: string; blocks?: unknown[] } | undefined;
      if (!user || !view || view.type !== 'home') return { body: { ok: false, error: 'invalid_arguments' } };
      if (checkMessage(undefined, view.blocks, 100)) return { body: { ok: false, error: 'invalid_blocks' } };
      transcript.homeViews.set(user, view);
      return { body: { view: { id: `V${randomUUID().slice(0, 8).toUpperCase()}`, ...view } } };
    },
    'views.open': (p) => {
      const view = p.view as { type?: string; blocks?: unknown[] } | undefined;
      if (!str(p.trigger_id)) return { body: { ok: false, error: 'invalid_trigger_id' } };
      if (!view || view.type !== 'modal' || checkMessage(undefined, view.blocks, 100)) return { body: { ok: false, error: 'invalid_blocks' } };
      transcript.openedViews.push(view);
      transcript.openedViewTriggers.push(str(p.trigger_id) ?? '');
      return { body: { view: { id: `V${randomUUID().slice(0, 8).toUpperCase()}`, ...view } } };
    },
    'conversations.history': (p) => {
      const channel = str(p.channel);
      const problem = channelProblem(channel);
      if (problem || !channel) return { body: { ok: false, error: problem } };
      return { body: conversationsHistory(transcript, channel, p) };
    },
    'conversations.replies': (p) => {
      const channel = str(p.channel);
      const problem = channelProblem(channel);
      if (problem || !channel) return { body: { ok: false, error: problem } };
      const body = conversationsReplies(transcript, channel, p);
      return { body: body ?? { ok: false, error: 'thread_not_found' } };
    },
    'conversations.info': (p) => {
      const channel = str(p.channel);
      const problem = channelProblem(channel);
      if (problem === 'channel_not_found' || !channel) return { body: { ok: false, error: 'channel_not_found' } };
      return { body: { channel: { id: channel, name: channel.toLowerCase(), is_channel: true, is_member: problem !== 'not_in_channel' } } };
    },
    'users.info': (p) => {
      const id = str(p.user);
      const user = id ? options.users?.[id] : undefined;
      if (!id || (options.users && !user)) return { body: { ok: false, error: 'user_not_found' } };
      const realName = user?.real_name ?? id;
      const profile = { real_name: realName, display_name: user?.name ?? id.toLowerCase(), ...(user?.email ? { email: user.email } : {}) };
      return { body: { user: { id, team_id: teamId, name: user?.name ?? id.toLowerCase(), real_name: realName, is_admin: user?.is_admin ?? false, deleted: user?.deleted ?? false, profile } } };
    },
    'files.getUploadURLExternal': (p) => uploads.getUploadURLExternal(p),
    'files.completeUploadExternal': (p) => uploads.completeUploadExternal(p),
    'usergroups.users.list': (p) => {
      const id = str(p.usergroup);
      const members = id ? options.usergroups?.[id] : undefined;
      if (!members) return { body: { ok: false, error: 'no_such_subteam' } };
      return { body: { users: members } };
    },
  };

  const answer = (res: ServerResponse, a: Answer) => {
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers });
    res.end(JSON.stringify(a.status === undefined || a.status === 200 ? { ok: true, ...a.body } : a.body));
  };

  const takeFault = (method: string): Fault | undefined => {
    const queued = faults.get(method);
    const next = queued?.[0];
    if (!next) return undefined;
    next.count -= 1;
    if (next.count <= 0) queued.shift();
    return next.fault;
  };

  const handleApi = (method: string, params: Params, auth: string | undefined, res: ServerResponse) => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const handler = methods[method];
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : str(params.token);
    // The one method called with the app-level token rather than the bot's.
    if (method === 'apps.connections.open') {
      const opened = socketMode.connectionsOpen(token);
      return answer(res, { body: opened });
    }
    if (!handler) return answer(res, { status: 404, body: { ok: false, error: 'unknown_method' } });
    if (token !== botToken) return answer(res, { body: { ok: false, error: token ? 'invalid_auth' : 'not_authed' } });
    if (now() < outageUntil) {
      outageRefused.set(method, (outageRefused.get(method) ?? 0) + 1);
      return answer(res, { status: 503, body: { ok: false, error: 'service_unavailable' } });
    }
    const next = takeFault(method);
    let after: Fault | undefined;
    if (next) {
      const f = next;
      if (f.kind === 'drop-connection') return res.socket?.destroy();
      if (f.kind === 'http') return answer(res, { status: f.status, body: { ok: false, error: 'internal_error' } });
      if (f.kind === 'error') return answer(res, { body: { ok: false, error: f.error } });
      if (f.kind === 'rate-limited') {
        rateLimited.set(method, (rateLimited.get(method) ?? 0) + 1);
        return answer(res, { status: 429, headers: { 'retry-after': String(f.retryAfterSeconds) }, body: { ok: false, error: 'ratelimited' } });
      }
      after = f;
    }
    const wait = limiter.take(method, str(params.channel));
    if (wait > 0) {
      rateLimited.set(method, (rateLimited.get(method) ?? 0) + 1);
      return answer(res, { status: 429, headers: { 'retry-after': String(wait) }, body: { ok: false, error: 'ratelimited' } });
    }
    const result = handler(params);
    transcript.changed();
    // The call took effect; only its answer goes wrong.
    if (after?.kind === 'accepted-then-drop') return res.socket?.destroy();
    if (after?.kind === 'accepted-then-http') return answer(res, { status: after.status, body: { ok: false, error: 'internal_error' } });
    if (after?.kind === 'slow') {
      setTimeout(() => {
        if (!res.destroyed) answer(res, result);
      }, after.delayMs).unref();
      return;
    }
    return answer(res, result);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const body = await readBody(req, BODY_LIMIT);
      // The upload URL files.getUploadURLExternal handed out; its faults are injected as `files.upload`.
      if (req.method === 'POST' && url.pathname.startsWith('/upload/')) {
        calls.set('files.upload', (calls.get('files.upload') ?? 0) + 1);
        const fault = takeFault('files.upload');
        if (fault) return answer(res, { status: fault.kind === 'http' ? fault.status : 500, body: { ok: false, error: 'upload_failed' } });
        const stored = uploads.upload(url.pathname.slice(8), body, req.headers['content-type']);
        transcript.changed();
        return res.writeHead(stored.status, { 'content-type': 'text/plain' }).end(stored.text);
      }
      const raw = body.toString('utf8');
      if (req.method === 'POST' && url.pathname.startsWith('/api/')) {
        let params: Params;
        try {
          params = parseParams(raw, req.headers['content-type']);
        } catch {
          return answer(res, { body: { ok: false, error: 'invalid_json' } });
        }
        return handleApi(url.pathname.slice(5), params, req.headers.authorization, res);
      }
      if (req.method === 'POST' && url.pathname.startsWith('/respond/')) {
        const id = url.pathname.slice(9);
        if (!responseIds.has(id)) return answer(res, { status: 404, body: { ok: false, error: 'expired_url' } });
        transcript.responses.push({ id, body: JSON.parse(raw || '{}') as Record<string, unknown> });
        transcript.changed();
        return answer(res, { body: {} });
      }
      if (req.method === 'GET' && url.pathname === '/_transcript') return answer(res, { body: transcript.toJSON() as Record<string, unknown> });
      return answer(res, { status: 404, body: { ok: false, error: 'not_found' } });
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  server.on('upgrade', (req, socket, head: Buffer) => socketMode.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    apiUrl: `${base}/api/`,
    transcript,
    calls,
    rateLimited,
    outageRefused,
    outage: (ms) => {
      outageUntil = ms > 0 ? now() + ms : 0;
    },
    setLimits: (limits) => limiter.setLimits(limits),
    injectFaults: (method, count, fault) => {
      const list = faults.get(method) ?? [];
      list.push({ count, fault });
      faults.set(method, list);
    },
    responseUrl: () => {
      const id = randomUUID();
      responseIds.add(id);
      return `${base}/respond/${id}`;
    },
    socketMode,
    close: async () => {
      await socketMode.close();
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      });
    },
  };
}
