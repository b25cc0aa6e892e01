/**
 * A watch stream is newline-delimited JSON from a cluster we do not control. This splits its
 * bytes into lines with two bounds, so a stream can never make Glidepath buffer without limit:
 * a line longer than `maxLineBytes` ends the stream at once (its bytes dropped, nothing after it
 * kept), and the whole stream stops at `maxStreamBytes` (the caller resumes from the last
 * resourceVersion it saw). Pure: bytes in, lines and one verdict out.
 */

export const DEFAULT_WATCH_MAX_LINE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_WATCH_MAX_STREAM_BYTES = 512 * 1024 * 1024;

export interface WatchLineLimits {
  /** Longest line accepted, in bytes, without its newline. */
  maxLineBytes: number;
  /** Bytes read from one stream before it is ended (an ordinary end, not an error). */
  maxStreamBytes: number;
}

/** What the reader says after a chunk: go on, or the stream must end and why. */
export type LineVerdict = 'more' | 'line-too-long' | 'stream-budget-spent';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class WatchLineReader {
  /** Bytes of the line not yet ended by a newline, in the pieces they arrived in (joined once, at its newline). */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private verdict: LineVerdict = 'more';
  /** fatal: false, so bytes that are not UTF-8 become U+FFFD and the line fails JSON.parse (skipped), never throws here. */
  private readonly decoder = new TextDecoder('utf-8');
  bytesRead = 0;
  lines = 0;

  constructor(readonly limits: WatchLineLimits) {}

  /**
   * Feeds one chunk; `onLine` gets every line it completes, in order. Once the verdict is not
   * 'more', later chunks are ignored. A line is split only at byte 0x0A, which never occurs
   * inside a multi-byte UTF-8 sequence, so decoding each whole line is correct wherever the
   * chunks were cut.
   */
  push(chunk: Uint8Array, onLine: (line: string) => void): LineVerdict {
    if (this.verdict !== 'more') return this.verdict;
    let bytes = chunk;
    const left = this.limits.maxStreamBytes - this.bytesRead;
    const overBudget = bytes.length > left;
    // Past the budget nothing is read: the lines wholly within it are still delivered.
    if (overBudget) bytes = bytes.subarray(0, Math.max(0, left));
    this.bytesRead += bytes.length;
    let start = 0;
    for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, start)) {
      if (this.pendingBytes + (newline - start) > this.limits.maxLineBytes) return this.tooLong();
      onLine(this.takeLine(bytes.subarray(start, newline)));
      start = newline + 1;
    }
    if (start < bytes.length) {
      const rest = bytes.subarray(start);
      // Known too long before its newline arrives: dropped now rather than kept up to the newline.
      if (this.pendingBytes + rest.length > this.limits.maxLineBytes) return this.tooLong();
      // A copy: the caller may reuse the chunk's memory, and a small rest must not pin a large chunk.
      this.pending.push(rest.slice());
      this.pendingBytes += rest.length;
    }
    if (overBudget) {
      this.dropPending();
      this.verdict = 'stream-budget-spent';
    }
    return this.verdict;
  }

  /** The stream ended: a last line without its newline still counts (as client-go reads it). */
  end(onLine: (line: string) => void): void {
    if (this.verdict === 'more' && this.pendingBytes > 0) onLine(this.takeLine(new Uint8Array(0)));
    this.dropPending();
  }

  private takeLine(tail: Uint8Array): string {
    let bytes = tail;
    if (this.pending.length > 0) {
      bytes = new Uint8Array(this.pendingBytes + tail.length);
      let at = 0;
      for (const piece of this.pending) {
        bytes.set(piece, at);
        at += piece.length;
      }
      bytes.set(tail, at);
      this.dropPending();
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, bytes.length - 1);
    this.lines++;
    return this.decoder.decode(bytes);
  }

  private tooLong(): LineVerdict {
    this.dropPending();
    this.verdict = 'line-too-long';
    return this.verdict;
  }

  private dropPending(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}

export type WatchEventLine = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: Record<string, unknown> };

const EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One line as a watch event, or undefined for anything else (not JSON, half JSON, an unknown
 * type, an object that is not an object). JSON.parse makes `__proto__` an own key of a fresh
 * object, and nothing parsed is assigned onto an existing one, so such lines pollute nothing.
 */
export function parseWatchEvent(line: string): WatchEventLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed)) return undefined;
  const type = Object.hasOwn(parsed, 'type') ? parsed.type : undefined;
  const object = Object.hasOwn(parsed, 'object') ? parsed.object : undefined;
  if (typeof type !== 'string' || !EVENT_TYPES.has(type) || !isPlainObject(object)) return undefined;
  return { type: type as WatchEventLine['type'], object };
}
