/**
 * Slack's Socket Mode as the stand-in serves it (https://api.slack.com/apis/socket-mode, and
 * /apis/connections/socket-implement), for the real @slack/socket-mode client inside Bolt:
 *
 * - `apps.connections.open` with the app-level token (xapp-…) answers a single-use ws:// URL to
 *   this server (`/link/?ticket=…`); a bot token or an unknown one is invalid_auth;
 * - on connect the app gets `hello`; the server pings each connection, as Slack does;
 * - events, slash commands and interactions arrive as envelopes
 *   `{envelope_id, type: events_api | slash_commands | interactive, payload, accepts_response_payload}`
 *   on the newest open connection, and the app acks each with `{envelope_id, payload?}`;
 * - `disconnect` (refresh_requested, warning, link_disabled) asks the app to reconnect; a
 *   connection still open after `closeAfterDisconnectMs` is closed by the server;
 * - an Events API envelope not acked in time (its connection may have gone) is sent again with
 *   retry_attempt + 1 and retry_reason `timeout`, up to 3 times, as Slack retries events. Slash
 *   commands and interactions are not retried: Slack shows the person an error after 3 s, and
 *   the stand-in rejects the delivery with EnvelopeNotAcked.
 *
 * Unlike Slack, an envelope sent while no connection is open waits for the next one (Slack would
 * drop it); tests can then send the next command straight after a `disconnect`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import {
  blockActionPayload,
  eventCallbackPayload,
  slashCommandPayload,
  viewSubmissionPayload,
  type BlockActionInput,
  type PayloadTeam,
  type SlashCommandInput,
  type ViewSubmissionInput,
} from './payloads.js';

/** The app-level token the stand-in accepts unless told another. */
export const STAND_IN_APP_TOKEN = 'xapp-1-stand-in';

export type EnvelopeType = 'events_api' | 'slash_commands' | 'interactive';
export type DisconnectReason = 'refresh_requested' | 'warning' | 'link_disabled';

export interface SocketModeOptions {
  /** The app-level token apps.connections.open accepts. */
  appToken: string;
  team: PayloadTeam;
  /** How long an envelope waits for its ack (Slack: 3 s). */
  ackTimeoutMs?: number;
  /** How many times an unacked Events API envelope is sent again (Slack: 3). */
  maxRetries?: number;
  /** How often the server pings each connection; 0 never. */
  pingIntervalMs?: number;
  /** How long an app may keep a connection after `disconnect` before the server closes it. */
  closeAfterDisconnectMs?: number;
  /** A slash command's ack with a message in it: Slack shows it to the person (ephemeral unless in_channel). */
  onCommandAnswer?: (command: Record<string, string>, answer: Record<string, unknown>) => void;
}

export interface EnvelopeAck {
  envelopeId: string;
  /** What the ack carried: a slash command's immediate answer, a view_submission's response_action. */
  payload: Record<string, unknown> | undefined;
  /** 0 when the first delivery was acked. */
  retryAttempt: number;
}

export class EnvelopeNotAcked extends Error {
  override readonly name = 'EnvelopeNotAcked';
}

export interface SocketModeStats {
  /** apps.connections.open calls that handed out a URL. */
  urlsIssued: number;
  /** Connections that got `hello`. */
  connections: number;
  /** Connections open now. */
  open: number;
  envelopesSent: number;
  redeliveries: number;
  acks: number;
  /** Acks naming no envelope in flight (late, duplicate or made up): ignored, as Slack does. */
  strayAcks: number;
  /** Messages from the app that are not an ack at all. */
  badMessages: number;
}

interface Connection {
  id: number;
  ws: WebSocket;
  /** `disconnect` was sent: no new envelopes go here. */
  leaving: boolean;
  timers: NodeJS.Timeout[];
}

interface InFlight {
  id: string;
  type: EnvelopeType;
  payload: Record<string, unknown>;
  attempt: number;
  timer?: NodeJS.Timeout;
  resolve: (ack: EnvelopeAck) => void;
  reject: (err: Error) => void;
}

const ackSchema = z.object({ envelope_id: z.string().min(1), payload: z.record(z.string(), z.unknown()).optional() });

export class SocketModeStandIn {
  readonly stats: SocketModeStats = { urlsIssued: 0, connections: 0, open: 0, envelopesSent: 0, redeliveries: 0, acks: 0, strayAcks: 0, badMessages: 0 };
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly connections: Connection[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  /** Envelopes waiting for a connection. */
  private readonly waiting: InFlight[] = [];
  private readonly helloWaiters: { count: number; resolve: () => void }[] = [];
  /** Acks awaited for raw frames (sendRaw), by the envelope_id the frame carried. */
  private readonly rawWaiters = new Map<string, { resolve: (ack: EnvelopeAck) => void; timer: NodeJS.Timeout }>();
  private nextConnectionId = 1;
  private closed = false;

  constructor(
    private readonly options: SocketModeOptions,
    /** http://127.0.0.1:port of the stand-in, known once it listens. */
    private readonly baseUrl: () => string,
  ) {}

  /** apps.connections.open: a URL for one connection, for the app-level token only. */
  connectionsOpen(token: string | undefined): { ok: true; url: string } | { ok: false; error: string } {
    if (!token) return { ok: false, error: 'not_authed' };
    if (token !== this.options.appToken) return { ok: false, error: 'invalid_auth' };
    const ticket = randomUUID();
    this.tickets.add(ticket);
    this.stats.urlsIssued += 1;
    return { ok: true, url: `${this.baseUrl().replace(/^http/, 'ws')}/link/?ticket=${ticket}&app_id=${this.options.team.apiAppId ?? 'A0GLIDEPATH'}` };
  }

  /** The HTTP server's `upgrade`: only a ticket from apps.connections.open, and only once. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const ticket = url.searchParams.get('ticket') ?? '';
    if (this.closed || url.pathname !== '/link/' || !this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  /** Sends one envelope and resolves with the app's ack. */
  deliver(type: EnvelopeType, payload: Record<string, unknown>): Promise<EnvelopeAck> {
    if (this.closed) return Promise.reject(new EnvelopeNotAcked('the Slack stand-in is closed'));
    return new Promise<EnvelopeAck>((resolve, reject) => {
      const envelope: InFlight = { id: randomUUID(), type, payload, attempt: 0, resolve, reject };
      this.inFlight.set(envelope.id, envelope);
      this.dispatch(envelope);
    });
  }

  slashCommand(input: SlashCommandInput): Promise<EnvelopeAck> {
    return this.deliver('slash_commands', slashCommandPayload(input, this.options.team));
  }

  blockAction(input: BlockActionInput): Promise<EnvelopeAck> {
    return this.deliver('interactive', blockActionPayload(input, this.options.team));
  }

  viewSubmission(input: ViewSubmissionInput): Promise<EnvelopeAck> {
    return this.deliver('interactive', viewSubmissionPayload(input, this.options.team));
  }

  event(event: Record<string, unknown>): Promise<EnvelopeAck> {
    return this.deliver('events_api', eventCallbackPayload(event, this.options.team));
  }

  /**
   * Sends `text` as it is (not necessarily JSON, not necessarily an envelope) on the newest open
   * connection, to see how the app survives a frame Slack should never send. With `envelopeId`,
   * resolves with the app's ack for that id, or undefined if none came within the ack timeout;
   * without, once the frame is written.
   */
  sendRaw(text: string, envelopeId?: string): Promise<EnvelopeAck | undefined> {
    const target = [...this.connections].reverse().find((c) => !c.leaving && c.ws.readyState === c.ws.OPEN);
    if (!target) return Promise.reject(new Error('sendRaw: no open Socket Mode connection'));
    return new Promise<EnvelopeAck | undefined>((resolve) => {
      if (envelopeId !== undefined) {
        const timer = setTimeout(() => {
          this.rawWaiters.delete(envelopeId);
          resolve(undefined);
        }, this.options.ackTimeoutMs ?? 3_000);
        timer.unref();
        this.rawWaiters.set(envelopeId, { resolve, timer });
      }
      target.ws.send(text, () => {
        if (envelopeId === undefined) resolve(undefined);
      });
    });
  }

  /**
   * Sends `disconnect` on every open connection, as Slack does before it recycles one; resolves
   * once those connections are closed (by the app, or by the server after closeAfterDisconnectMs).
   */
  async disconnect(reason: DisconnectReason = 'refresh_requested'): Promise<void> {
    const leaving = this.connections.filter((c) => !c.leaving);
    await Promise.all(
      leaving.map(
        (c) =>
          new Promise<void>((resolve) => {
            c.leaving = true;
            c.ws.once('close', () => resolve());
            c.ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'stand-in' } }));
            const force = setTimeout(() => c.ws.terminate(), this.options.closeAfterDisconnectMs ?? 10_000);
            force.unref();
            c.timers.push(force);
          }),
      ),
    );
  }

  /** Resolves once `count` connections in all have got `hello` (1: the first; stats.connections + 1: the next). */
  whenConnected(count = 1): Promise<void> {
    if (this.stats.connections >= count) return Promise.resolve();
    return new Promise((resolve) => this.helloWaiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const e of [...this.inFlight.values()]) this.settle(e, new EnvelopeNotAcked(`envelope ${e.id} (${e.type}) was not acked before the Slack stand-in closed`));
    for (const c of this.connections) c.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(ws: WebSocket): void {
    const connection: Connection = { id: this.nextConnectionId++, ws, leaving: false, timers: [] };
    this.connections.push(connection);
    this.stats.open = this.connections.length;
    ws.on('message', (data, isBinary) => this.onMessage(isBinary ? undefined : data.toString()));
    ws.on('close', () => this.forget(connection));
    ws.on('error', () => ws.terminate());
    if (this.options.pingIntervalMs !== 0) {
      const ping = setInterval(() => ws.ping(`stand-in ${Date.now()}`), this.options.pingIntervalMs ?? 10_000);
      ping.unref();
      connection.timers.push(ping);
    }
    this.stats.connections += 1;
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.connections.length,
        debug_info: { host: 'stand-in', build_number: 1, approximate_connection_time: 3600 },
        connection_info: { app_id: this.options.team.apiAppId ?? 'A0GLIDEPATH' },
      }),
    );
    for (const w of this.helloWaiters.filter((w) => this.stats.connections >= w.count)) {
      this.helloWaiters.splice(this.helloWaiters.indexOf(w), 1);
      w.resolve();
    }
    for (const envelope of this.waiting.splice(0)) this.dispatch(envelope);
  }

  private forget(connection: Connection): void {
    for (const t of connection.timers) clearTimeout(t);
    const i = this.connections.indexOf(connection);
    if (i >= 0) this.connections.splice(i, 1);
    this.stats.open = this.connections.length;
  }

  /** The newest connection not asked to leave gets the envelope; none open: it waits for one. */
  private dispatch(envelope: InFlight): void {
    if (this.closed) return;
    const target = [...this.connections].reverse().find((c) => !c.leaving && c.ws.readyState === c.ws.OPEN);
    if (!target) {
      this.waiting.push(envelope);
      return;
    }
    const events = envelope.type === 'events_api';
    target.ws.send(
      JSON.stringify({
        envelope_id: envelope.id,
        type: envelope.type,
        payload: envelope.payload,
        accepts_response_payload: envelope.type === 'slash_commands' || envelope.payload.type === 'view_submission' || envelope.payload.type === 'block_suggestion',
        ...(events || envelope.attempt > 0 ? { retry_attempt: envelope.attempt, retry_reason: envelope.attempt > 0 ? 'timeout' : '' } : {}),
      }),
    );
    this.stats.envelopesSent += 1;
    envelope.timer = setTimeout(() => this.timedOut(envelope), this.options.ackTimeoutMs ?? 3_000);
    envelope.timer.unref();
  }

  private timedOut(envelope: InFlight): void {
    if (!this.inFlight.has(envelope.id)) return;
    if (envelope.type === 'events_api' && envelope.attempt < (this.options.maxRetries ?? 3)) {
      envelope.attempt += 1;
      this.stats.redeliveries += 1;
      this.dispatch(envelope);
      return;
    }
    const tries = envelope.attempt + 1;
    this.settle(envelope, new EnvelopeNotAcked(`envelope ${envelope.id} (${envelope.type}) was not acked within ${this.options.ackTimeoutMs ?? 3_000} ms (${tries} ${tries === 1 ? 'delivery' : 'deliveries'})`));
  }

  private onMessage(text: string | undefined): void {
    let parsed: z.infer<typeof ackSchema> | undefined;
    try {
      const result = ackSchema.safeParse(JSON.parse(text ?? ''));
      parsed = result.success ? result.data : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed) {
      this.stats.badMessages += 1;
      return;
    }
    const raw = this.rawWaiters.get(parsed.envelope_id);
    if (raw) {
      this.rawWaiters.delete(parsed.envelope_id);
      clearTimeout(raw.timer);
      this.stats.acks += 1;
      raw.resolve({ envelopeId: parsed.envelope_id, payload: parsed.payload, retryAttempt: 0 });
      return;
    }
    const envelope = this.inFlight.get(parsed.envelope_id);
    if (!envelope) {
      this.stats.strayAcks += 1;
      return;
    }
    this.stats.acks += 1;
    const payload = parsed.payload && Object.keys(parsed.payload).length > 0 ? parsed.payload : undefined;
    if (envelope.type === 'slash_commands' && payload && (payload.text !== undefined || payload.blocks !== undefined)) {
      this.options.onCommandAnswer?.(envelope.payload as Record<string, string>, payload);
    }
    this.settle(envelope, { envelopeId: envelope.id, payload, retryAttempt: envelope.attempt });
  }

  private settle(envelope: InFlight, outcome: EnvelopeAck | Error): void {
    clearTimeout(envelope.timer);
    this.inFlight.delete(envelope.id);
    const w = this.waiting.indexOf(envelope);
    if (w >= 0) this.waiting.splice(w, 1);
    if (outcome instanceof Error) envelope.reject(outcome);
    else envelope.resolve(outcome);
  }
}
