/**
 * Slack's file upload flow, as the stand-in serves it: `files.getUploadURLExternal` hands out an
 * upload URL on the stand-in and a file id; a POST of the bytes to that URL stores them (raw or
 * multipart, answered `OK - <length>` like Slack); `files.completeUploadExternal` shares the
 * uploaded files into a channel or thread as one message carrying them, with their alt text, in
 * the transcript. Completing a file already shared answers ok and shares nothing more (the
 * stand-in's reading of a retried completion).
 */
import { randomUUID } from 'node:crypto';
import type { Transcript, TranscriptFile, TranscriptMessage } from './transcript.js';

type Params = Record<string, unknown>;
type Answer = { status?: number; body: Record<string, unknown> };

interface PendingFile {
  id: string;
  name: string;
  length: number;
  altText?: string;
  bytes?: Buffer;
  sharedIn?: string;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export class FileUploads {
  private readonly files = new Map<string, PendingFile>();

  constructor(
    private readonly transcript: Transcript,
    private readonly base: () => string,
    private readonly now: () => number,
    private readonly channelProblem: (channel: string | undefined) => string | undefined,
    private readonly botUserId: string,
  ) {}

  getUploadURLExternal(p: Params): Answer {
    const name = str(p.filename);
    const length = Number(p.length);
    if (!name || !Number.isInteger(length) || length <= 0) return { body: { ok: false, error: 'invalid_arguments' } };
    const id = `F${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
    const altText = str(p.alt_txt) ?? str(p.alt_text);
    this.files.set(id, { id, name, length, ...(altText ? { altText } : {}) });
    return { body: { upload_url: `${this.base()}/upload/${id}`, file_id: id } };
  }

  /** The POST to an upload URL: stores the bytes. The length must be the one announced. */
  upload(id: string, body: Buffer, contentType: string | undefined): { status: number; text: string } {
    const file = this.files.get(id);
    if (!file) return { status: 404, text: 'unknown upload' };
    const bytes = contentType?.startsWith('multipart/form-data') ? multipartFile(body, contentType) : body;
    if (!bytes || bytes.length !== file.length) return { status: 400, text: `length mismatch: expected ${file.length}` };
    file.bytes = bytes;
    return { status: 200, text: `OK - ${bytes.length}` };
  }

  completeUploadExternal(p: Params): Answer {
    const list = Array.isArray(p.files) ? (p.files as { id?: unknown; title?: unknown }[]) : undefined;
    const channel = str(p.channel_id);
    const threadTs = str(p.thread_ts);
    if (!list || list.length === 0 || list.length > 10) return { body: { ok: false, error: 'invalid_arguments' } };
    const problem = channel ? this.channelProblem(channel) : undefined;
    if (problem) return { body: { ok: false, error: problem } };
    const files: PendingFile[] = [];
    for (const f of list) {
      const file = typeof f.id === 'string' ? this.files.get(f.id) : undefined;
      if (!file) return { body: { ok: false, error: 'file_not_found' } };
      if (!file.bytes) return { body: { ok: false, error: 'upload_not_complete' } };
      files.push(file);
    }
    const where = `${channel ?? ''}/${threadTs ?? ''}`;
    const titles = new Map(list.map((f) => [f.id, str(f.title)]));
    const fresh = files.filter((f) => f.sharedIn !== where);
    if (channel && fresh.length > 0) {
      const parent = threadTs ? this.transcript.messages(channel).find((m) => m.ts === threadTs) : undefined;
      if (threadTs && !parent) return { body: { ok: false, error: 'thread_not_found' } };
      const shared = fresh.map((f) => sharedFile({ id: f.id, name: f.name, title: titles.get(f.id) ?? f.name, ...(f.altText ? { altText: f.altText } : {}) }, f.bytes!));
      const ts = this.transcript.nextTs(this.now());
      const message: TranscriptMessage = { ts, channel, user: this.botUserId, text: '', blocks: [], at: this.now(), edits: [], replies: [], files: shared, ...(threadTs ? { threadTs } : {}) };
      if (parent) parent.replies.push(message);
      else this.transcript.channels.set(channel, [...this.transcript.messages(channel), message]);
      for (const f of fresh) f.sharedIn = where;
    }
    return { body: { files: files.map((f) => ({ id: f.id, name: f.name, title: titles.get(f.id) ?? f.name, size: f.length, mimetype: 'image/png' })) } };
  }
}

/** The bytes ride along unlisted: the transcript's JSON (`/_transcript`, the page) names the file, it does not carry it. */
function sharedFile(file: Omit<TranscriptFile, 'bytes'>, bytes: Buffer): TranscriptFile {
  return Object.defineProperty({ ...file }, 'bytes', { value: bytes, enumerable: false }) as TranscriptFile;
}

/** The first part's body of a multipart/form-data POST (Slack takes the file either way). */
function multipartFile(body: Buffer, contentType: string): Buffer | undefined {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) return undefined;
  const start = body.indexOf('\r\n\r\n', body.indexOf(`--${boundary}`));
  const end = body.indexOf(`\r\n--${boundary}`, start + 4);
  return start < 0 || end < 0 ? undefined : body.subarray(start + 4, end);
}
