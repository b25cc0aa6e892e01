/** What the stand-in Slack saw: channels → messages → thread replies, with every edit. Tests read it. */

export interface MessageVersion {
  text: string;
  blocks: unknown[];
  /** Stand-in clock time of the call. */
  at: number;
}

/** Slack message metadata: an app-defined event type and payload, sent with chat.postMessage / chat.update. */
export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** A file shared into a channel or thread (files.completeUploadExternal), with the bytes uploaded for it. */
export interface TranscriptFile {
  id: string;
  name: string;
  title: string;
  altText?: string;
  bytes: Buffer;
}

export interface TranscriptMessage extends MessageVersion {
  ts: string;
  /** A file share: the files it carries. */
  files?: TranscriptFile[];
  metadata?: MessageMetadata;
  channel: string;
  threadTs?: string;
  user: string;
  /** Earlier versions, oldest first; the fields above are the current one. */
  edits: MessageVersion[];
  replies: TranscriptMessage[];
}

export interface Ephemeral {
  channel: string;
  user: string;
  text: string;
  blocks: unknown[];
  threadTs?: string;
}

export interface ResponseUrlPost {
  id: string;
  body: Record<string, unknown>;
}

export class Transcript {
  readonly channels = new Map<string, TranscriptMessage[]>();
  readonly ephemerals: Ephemeral[] = [];
  readonly homeViews = new Map<string, unknown>();
  readonly openedViews: unknown[] = [];
  /** The trigger_id each of openedViews was opened with (what ties a dialog to the click or command behind it). */
  readonly openedViewTriggers: string[] = [];
  readonly responses: ResponseUrlPost[] = [];
  private seq = 0;
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after every change the stand-in makes (the browser page's live updates). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called by the stand-in after each call that may have changed the transcript. */
  changed(): void {
    for (const listener of this.listeners) listener();
  }

  nextTs(now: number): string {
    this.seq += 1;
    return `${Math.floor(now / 1000)}.${String(this.seq).padStart(6, '0')}`;
  }

  /** Top-level messages of a channel, oldest first. */
  messages(channel: string): TranscriptMessage[] {
    return this.channels.get(channel) ?? [];
  }

  find(channel: string, ts: string): TranscriptMessage | undefined {
    for (const m of this.messages(channel)) {
      if (m.ts === ts) return m;
      const r = m.replies.find((x) => x.ts === ts);
      if (r) return r;
    }
    return undefined;
  }

  /** A file shared into a channel or thread, with its bytes (the page draws it from them). */
  file(id: string): TranscriptFile | undefined {
    for (const parents of this.channels.values()) {
      for (const m of parents) {
        for (const x of [m, ...m.replies]) {
          const found = x.files?.find((f) => f.id === id);
          if (found) return found;
        }
      }
    }
    return undefined;
  }

  toJSON(): unknown {
    return {
      channels: Object.fromEntries(this.channels),
      ephemerals: this.ephemerals,
      homeViews: Object.fromEntries(this.homeViews),
      openedViews: this.openedViews,
      responses: this.responses,
    };
  }
}
