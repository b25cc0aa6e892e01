/**
 * What the page shows, built from the Slack stand-in's transcript plus what only this web server
 * knows: where each response_url it handed out was used (a slash command in a channel, or a click
 * on an item), the order in which items first appeared, and the dialog waiting for you. Slack
 * itself puts a response_url answer where it came from: in_channel answers are posted for
 * everyone, others are shown only to the person, and replace_original edits the clicked message.
 */
import type { SlackStandIn } from '../slack/server.js';
import type { Block, PageChannel, PageItem, PageModal, PageState } from './client/page-state.js';

/** `by`: the Slack user who sent it when it is not you (the sandbox acting with --auto). */
export type ResponseOrigin =
  | { kind: 'command'; channel: string; command: string; by?: string }
  | { kind: 'click'; channel: string; key: string; threadTs?: string; by?: string };

export interface LedgerOptions {
  slack: SlackStandIn;
  you: { id: string; name: string };
  users: Record<string, string>;
  channels: PageChannel[];
  now?: () => number;
}

function blocksOf(value: unknown): Block[] {
  return Array.isArray(value) ? (value.filter((b) => b && typeof b === 'object') as Block[]) : [];
}

/** Where the page GETs a shared file's bytes (sandbox/web/server.ts serves them from the transcript). */
export function fileUrl(id: string): string {
  return `/files/${encodeURIComponent(id)}`;
}

function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}

export class PageLedger {
  private readonly order = new Map<string, number>();
  private readonly firstSeen = new Map<string, number>();
  private readonly origins = new Map<string, ResponseOrigin>();
  private readonly notes: PageItem[] = [];
  /** The channel each trigger_id handed out was used in: a dialog opens over its own channel. */
  private readonly triggers = new Map<string, string>();
  /** What the story waits for you to do, shown at the top of the page. */
  private waiting: string[] = [];
  /** openedViews[0..handledViews) were submitted, closed or replaced by a later one. */
  private handledViews = 0;
  private readonly now: () => number;

  constructor(private readonly options: LedgerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A response_url for a request this page sends, remembered so its answers land where Slack puts them. */
  responseUrl(origin: ResponseOrigin): string {
    const url = this.options.slack.responseUrl();
    this.origins.set(url.slice(url.lastIndexOf('/') + 1), origin);
    return url;
  }

  /** A trigger_id for a command or click in `channel`, remembered so its dialog opens there. */
  triggerId(channel: string): string {
    const id = `trigger-${this.triggers.size + 1}-${this.now()}`;
    this.triggers.set(id, channel);
    return id;
  }

  /** What the story waits for (empty: nothing). */
  setWaiting(lines: string[]): void {
    this.waiting = lines;
  }

  /** The dialog was answered elsewhere (the story submitted it): the page closes it too. */
  viewAnswered(view: unknown): void {
    const index = this.options.slack.transcript.openedViews.lastIndexOf(view);
    if (index >= 0) this.closeModal(`v${index}`);
  }

  /** Whether the page shows this dialog still (Glidepath opened it; nobody submitted or closed it). */
  viewOpen(view: unknown): boolean {
    return this.options.slack.transcript.openedViews.lastIndexOf(view) >= this.handledViews;
  }

  /** The page's own note to you, as Slackbot answers a command Slack does not know. */
  note(channel: string, text: string, inAnswerTo?: string): void {
    const key = `n:${this.notes.length}`;
    this.notes.push({ key, kind: 'slackbot', channel, text, blocks: [], at: this.now(), edits: 0, order: this.stamp(key), ...(inAnswerTo ? { inAnswerTo } : {}) });
  }

  /** The dialog was submitted or closed: it is no longer shown. */
  closeModal(id: string): void {
    const index = Number(id.slice(1));
    if (Number.isInteger(index)) this.handledViews = Math.max(this.handledViews, index + 1);
  }

  /** Gives new items their place in the order; called on every change, so simultaneous items keep theirs. */
  observe(): void {
    this.items();
  }

  snapshot(): PageState {
    const home = this.options.slack.transcript.homeViews.get(this.options.you.id) as Block | undefined;
    const modal = this.modal();
    return {
      you: this.options.you,
      users: this.options.users,
      channels: this.channels(),
      items: this.items(),
      ...(home ? { home } : {}),
      ...(modal ? { modal } : {}),
      waiting: this.waiting,
    };
  }

  modal(): PageModal | undefined {
    const opened = this.options.slack.transcript.openedViews;
    if (opened.length <= this.handledViews) return undefined;
    const index = opened.length - 1;
    const channel = this.triggers.get(this.options.slack.transcript.openedViewTriggers[index] ?? '');
    return { id: `v${index}`, view: opened[index] as Block, ...(channel ? { channel } : {}) };
  }

  private stamp(key: string): number {
    let order = this.order.get(key);
    if (order === undefined) {
      order = this.order.size;
      this.order.set(key, order);
      this.firstSeen.set(key, this.now());
    }
    return order;
  }

  /** The configured channels, then any other channel Glidepath posted to. */
  private channels(): PageChannel[] {
    const known = new Set(this.options.channels.map((c) => c.id));
    const extra = [...this.options.slack.transcript.channels.keys()].filter((id) => !known.has(id)).map((id) => ({ id, name: id.toLowerCase(), topic: '' }));
    return [...this.options.channels, ...extra];
  }

  private items(): PageItem[] {
    const { transcript } = this.options.slack;
    const you = this.options.you.id;
    const byKey = new Map<string, PageItem>();
    for (const [channel, parents] of transcript.channels) {
      for (const parent of parents) {
        for (const m of [parent, ...parent.replies]) {
          const key = `m:${m.ts}`;
          byKey.set(key, {
            key,
            kind: 'message',
            channel,
            ...(m.threadTs ? { threadTs: m.threadTs } : { ts: m.ts }),
            text: m.text,
            blocks: blocksOf(m.blocks),
            at: m.at,
            edits: m.edits.length,
            order: this.stamp(key),
            ...(m.files?.length ? { files: m.files.map((f) => ({ id: f.id, title: f.title, alt: f.altText ?? f.title, url: fileUrl(f.id) })) } : {}),
          });
        }
      }
    }
    transcript.ephemerals.forEach((e, i) => {
      if (e.user !== you) return;
      const key = `e:${i}`;
      const order = this.stamp(key);
      byKey.set(key, { key, kind: 'ephemeral', channel: e.channel, ...(e.threadTs ? { threadTs: e.threadTs } : {}), text: e.text, blocks: blocksOf(e.blocks), at: this.firstSeen.get(key) ?? this.now(), edits: 0, order });
    });
    transcript.responses.forEach((r, i) => {
      const origin = this.origins.get(r.id);
      // Answers to requests this page did not send (the sandbox's own clicks) have no place to go.
      if (!origin) return;
      const key = `r:${i}`;
      const order = this.stamp(key);
      const at = this.firstSeen.get(key) ?? this.now();
      const text = typeof r.body.text === 'string' ? r.body.text : '';
      const blocks = blocksOf(r.body.blocks);
      if (origin.kind === 'click' && isTrue(r.body.delete_original)) {
        byKey.delete(origin.key);
        return;
      }
      const original = origin.kind === 'click' ? byKey.get(origin.key) : undefined;
      if (original && isTrue(r.body.replace_original)) {
        // A chat.update after this answer wins, as the later edit does in Slack.
        if (original.at <= at) byKey.set(original.key, { ...original, text, blocks, at, edits: original.edits + 1 });
        return;
      }
      const inChannel = r.body.response_type === 'in_channel';
      const by = origin.by && origin.by !== you ? (this.options.users[origin.by] ?? origin.by) : undefined;
      byKey.set(key, {
        key,
        kind: inChannel ? 'in-channel' : 'ephemeral',
        channel: origin.channel,
        ...(origin.kind === 'click' && origin.threadTs ? { threadTs: origin.threadTs } : {}),
        ...(origin.kind === 'command' ? { inAnswerTo: origin.command } : {}),
        ...(by ? { by } : {}),
        text,
        blocks,
        at,
        edits: 0,
        order,
      });
    });
    for (const note of this.notes) byKey.set(note.key, note);
    return [...byKey.values()].sort((a, b) => a.order - b.order);
  }
}
