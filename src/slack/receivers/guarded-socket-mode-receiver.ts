/**
 * Bolt's Socket Mode receiver with a guard in front of its client's frame handler.
 *
 * @slack/socket-mode 3.1.0 parses each WebSocket frame in `SocketModeClient.onWebSocketMessage`,
 * an async method registered as a plain EventEmitter listener for its internal `ws_message`
 * event: nobody awaits it. A frame that parses but is not the envelope it expects throws inside
 * it (`null` → `event.type` of null; `events_api` without `payload.event` → `.event.type` of
 * undefined; an event named like one of the client's own events, e.g. `ws_message`, re-enters
 * the handler with an object), and the rejection is unhandled: Node ends the process. One frame
 * from a misbehaving proxy or a Slack bug should cost one log line, not the bot.
 *
 * So we replace that one listener with ours: it checks the frame's shape first, hands a
 * well-formed frame to the client's own handler (catching whatever it still throws, so no
 * rejection escapes), and for a malformed one logs a warning with a cut excerpt and acks its
 * envelope_id if it has one (Slack would otherwise send it again, and it would fail again).
 * No node_modules patch, and no process-wide unhandledRejection handler: that would hide real bugs.
 */
import { SocketModeReceiver, type SocketModeReceiverOptions } from '@slack/bolt';
import type { Logger } from 'pino';

type SocketModeClient = SocketModeReceiver['client'];
type FrameListener = (data: unknown, isBinary: unknown) => unknown;
/**
 * The client's `send(envelope_id, body)`: what its own `ack()` calls. Private in the typings only;
 * it is the one way to answer an envelope on the client's socket without a handler's ack.
 */
type Sender = { send(envelopeId: string, body?: Record<string, unknown>): Promise<void> };

/** The envelope types Slack documents; anything else has no handler in Bolt worth reaching. */
const ENVELOPES = new Set(['events_api', 'slash_commands', 'interactive']);
const CONTROL = new Set(['hello', 'disconnect']);
/**
 * The client emits an events_api envelope under its event's type, and any other frame under its
 * own `type`, on the same emitter as its internal events: a frame named like one of these would
 * drive the client itself (reconnects, error logs, its frame handler again).
 */
const CLIENT_EVENTS = new Set([
  'ws_message',
  'slack_event',
  'outgoing_message',
  'error',
  'close',
  'connecting',
  'connected',
  'reconnecting',
  'disconnecting',
  'disconnected',
  'authenticated',
  'newListener',
  'removeListener',
]);
/** Enough of a frame to recognise it in a log; a frame can be megabytes. */
export const FRAME_EXCERPT_CHARS = 300;

/**
 * The excerpt of a frame for the log, its secrets blanked: a slash command or interaction payload
 * carries Slack's verification `token` (and a `response_url` that lets anyone answer in the channel).
 */
export function frameExcerpt(text: string | undefined): string | undefined {
  return text?.slice(0, FRAME_EXCERPT_CHARS * 4).replace(/("(?:token|response_url|trigger_id)"\s*:\s*")[^"]*"/g, '$1…"').slice(0, FRAME_EXCERPT_CHARS);
}

export type FrameVerdict = { ok: true } | { ok: false; reason: string; envelopeId?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the client can handle `text` without throwing, and if not, why and which envelope to ack. */
export function checkFrame(text: string): FrameVerdict {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isObject(frame)) return { ok: false, reason: 'not a JSON object' };
  const envelopeId = typeof frame.envelope_id === 'string' && frame.envelope_id.length > 0 ? frame.envelope_id : undefined;
  const refuse = (reason: string): FrameVerdict => ({ ok: false, reason, ...(envelopeId ? { envelopeId } : {}) });
  const type = frame.type;
  if (typeof type !== 'string') return refuse('no type');
  if (CONTROL.has(type)) return { ok: true };
  if (!ENVELOPES.has(type)) return refuse(`unknown type ${type.slice(0, 40)}`);
  if (!envelopeId) return refuse('no envelope_id');
  if (!isObject(frame.payload)) return refuse('no payload');
  if (type === 'events_api') {
    const event = frame.payload.event;
    if (!isObject(event) || typeof event.type !== 'string') return refuse('no payload.event.type');
    if (CLIENT_EVENTS.has(event.type)) return refuse(`event type ${event.type} is a Socket Mode client event`);
  }
  return { ok: true };
}

function frameText(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new TextDecoder().decode(data as ArrayBuffer);
  return undefined;
}

/**
 * Puts the guard in front of the client's frame handler. Throws if the client no longer has
 * exactly one `ws_message` listener (an upgrade changed its insides): better a start-up error
 * than a bot that silently runs unguarded again.
 */
export function guardSocketModeFrames(client: SocketModeClient, log: Logger): void {
  const listeners = client.listeners('ws_message') as FrameListener[];
  const [handle] = listeners;
  if (listeners.length !== 1 || !handle) {
    throw new Error(`@slack/socket-mode has ${listeners.length} 'ws_message' listeners, not 1: the frame guard in guarded-socket-mode-receiver.ts needs a look after this upgrade`);
  }
  client.removeAllListeners('ws_message');
  client.on('ws_message', (data: unknown, isBinary: unknown) => {
    const text = isBinary === true ? undefined : frameText(data);
    // A binary frame the client ignores itself (with a debug line); anything else that is no text is ours to drop.
    const verdict: FrameVerdict = isBinary === true ? { ok: true } : text === undefined ? { ok: false, reason: 'not a text frame' } : checkFrame(text);
    if (!verdict.ok) {
      log.warn(
        { reason: verdict.reason, envelopeId: verdict.envelopeId, frame: frameExcerpt(text), frameBytes: text === undefined ? undefined : Buffer.byteLength(text) },
        'Socket Mode frame ignored: not a well-formed envelope',
      );
      // Acked with an empty payload, as Slack expects within 3 s; unacked it would come back up to 3 times.
      if (verdict.envelopeId) {
        (client as unknown as Sender).send(verdict.envelopeId).catch((err: unknown) => log.warn({ envelopeId: verdict.envelopeId, err: (err as Error).message }, 'Socket Mode: could not ack a malformed frame'));
      }
      return;
    }
    // Whatever the client still throws on a frame we let through is a bug to see, not a crash.
    Promise.resolve()
      .then(() => handle.call(client, data, isBinary))
      .catch((err: unknown) => log.error({ err: { message: (err as Error).message, stack: (err as Error).stack }, frame: frameExcerpt(text) }, 'Socket Mode client failed on a frame'));
  });
}

export class GuardedSocketModeReceiver extends SocketModeReceiver {
  constructor(options: SocketModeReceiverOptions, log: Logger) {
    super(options);
    guardSocketModeFrames(this.client, log);
  }
}
