/**
 * The hands of the story: types /glidepath commands, clicks buttons and submits the Abort dialog
 * as signed Slack requests, exactly as Slack sends them, for you (you pressed Enter) or as the
 * sandbox's own Slack user (--auto), and prints what Glidepath answered (response_url and
 * ephemeral answers), naming the release each action is about. The page shows it all too: the
 * answers land where the page puts a person's own (PageHooks).
 */
import { ABORT_DIALOG_CALLBACK_ID } from '../../src/slack/buttons.js';
import type { SandboxSlackSender } from '../slack/mode.js';
import type { SlackStandIn } from '../slack/server.js';
import type { TranscriptMessage } from '../slack/transcript.js';
import { describeMessage } from '../describe-message.js';
import type { ResponseOrigin } from '../web/ledger.js';
import { PEOPLE, type Person } from './people.js';
import { changedLines } from './printer.js';
import { terminalText } from './terminal-text.js';

export { YOU } from './people.js';

/** Where the page puts what the story does, so the page shows it as it shows a person's own clicks. */
export interface PageHooks {
  /** A response_url whose answers the page shows where Slack would (under the command, in place of the clicked item). */
  responseUrl(origin: ResponseOrigin): string;
  /** A trigger_id tied to the channel: a dialog it opens shows over that channel. */
  triggerId(channel: string): string;
  /** The story answered this dialog itself: the page closes it. */
  dialogAnswered(view: unknown): void;
  /** Whether the page still shows the dialog (not submitted, not closed). */
  dialogOpen(view: unknown): boolean;
}

export interface ClickTarget {
  /** The page's key of the item (`m:<ts>` for a message, `r:<n>` for a response_url answer). */
  key: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  text: string;
  blocks: unknown[];
  /** Only one person sees it (a response_url answer): Slack says so, and it cannot be edited with chat.update. */
  ephemeral: boolean;
}

export interface ActorDeps {
  sender: SandboxSlackSender;
  slack: SlackStandIn;
  page: PageHooks;
  say: (line: string) => void;
}

export class Actor {
  /** Answers printed so far: each is printed once, under the release of the action it answers. */
  private responses = 0;
  private ephemerals = 0;
  private lastRelease = '';
  private lastAnswer = '';
  /** Who the answers are for: whoever acted last. */
  private lastBy: Person = 'you';

  constructor(private readonly deps: ActorDeps) {}

  /**
   * Prints the answers Glidepath gave since the last call (an answer can come long after the
   * request: a Refresh-and-approve waits for Argo CD), under the release last acted on.
   */
  flush(): string[] {
    const { transcript } = this.deps.slack;
    const answers = [
      ...transcript.responses.slice(this.responses).map((r) => ({ text: describeMessage(String(r.body.text ?? ''), (r.body.blocks as unknown[] | undefined) ?? []), replaces: r.body.replace_original === true })),
      ...transcript.ephemerals.slice(this.ephemerals).map((e) => ({ text: describeMessage(e.text, e.blocks), replaces: false })),
    ].filter((a) => a.text.trim() !== '');
    this.responses = transcript.responses.length;
    this.ephemerals = transcript.ephemerals.length;
    for (const a of answers) {
      // A replaced answer (the clicked message, now saying who did what) shows what changed.
      const shown = a.replaces ? changedLines(this.lastAnswer, a.text) : a.text;
      this.deps.say(`  ${this.lastRelease} · Glidepath ${a.replaces ? 'updated its answer' : this.lastBy === 'you' ? 'answered you' : 'answered the sandbox'}:\n${terminalText(shown, false).replace(/^/gm, '    ')}`);
      this.lastAnswer = a.text;
    }
    return answers.map((a) => a.text);
  }

  /** The release the person acted on last, for answers that name none. */
  get currentRelease(): string {
    return this.lastRelease || 'no release';
  }

  /** Runs `send`, then prints the answers Glidepath gave within a few seconds. */
  private async answered(by: Person, releaseId: string, send: () => Promise<unknown>): Promise<string[]> {
    const { slack } = this.deps;
    this.flush();
    this.lastRelease = releaseId;
    this.lastBy = by;
    const views = slack.transcript.openedViews.length;
    await send();
    let answers: string[] = [];
    for (let i = 0; i < 50 && answers.length === 0 && slack.transcript.openedViews.length === views; i++) {
      await new Promise((r) => setTimeout(r, 100));
      answers = this.flush();
    }
    return answers;
  }

  async command(by: Person, releaseId: string, channel: string, text: string): Promise<string[]> {
    const who = PEOPLE[by];
    this.deps.say(`→ ${releaseId} · ${by === 'you' ? 'you type' : 'the sandbox types for you (--auto)'}: /glidepath ${text}`);
    const responseUrl = this.deps.page.responseUrl({ kind: 'command', channel, command: `/glidepath ${text}`, by: who.id });
    return this.answered(by, releaseId, () => this.deps.sender.slashCommand({ command: '/glidepath', text, userId: who.id, channelId: channel, responseUrl, triggerId: this.deps.page.triggerId(channel) }));
  }

  /** Clicks a button of a message in a channel, or of an answer only one person sees (`ephemeral`), as the page would. */
  async click(by: Person, releaseId: string, target: ClickTarget, button: { actionId: string; value: string; label: string }): Promise<string[]> {
    this.deps.say(`→ ${releaseId} · ${by === 'you' ? `you click ${button.label}` : `the sandbox clicks ${button.label} for you (--auto)`}`);
    const responseUrl = this.deps.page.responseUrl({ kind: 'click', channel: target.channel, key: target.key, ...(target.threadTs ? { threadTs: target.threadTs } : {}), by: PEOPLE[by].id });
    return this.answered(by, releaseId, () =>
      this.deps.sender.blockAction({
        actionId: button.actionId,
        value: button.value,
        userId: PEOPLE[by].id,
        channelId: target.channel,
        messageTs: target.messageTs,
        ...(target.threadTs ? { threadTs: target.threadTs } : {}),
        messageText: target.text,
        messageBlocks: target.blocks,
        responseUrl,
        ephemeral: target.ephemeral,
        triggerId: this.deps.page.triggerId(target.channel),
      }),
    );
  }

  /** The Abort dialog Glidepath opened last, if any. */
  abortDialog(): Record<string, unknown> | undefined {
    return [...this.deps.slack.transcript.openedViews].reverse().find((v) => (v as { callback_id?: string }).callback_id === ABORT_DIALOG_CALLBACK_ID) as Record<string, unknown> | undefined;
  }

  dialogOpen(view: unknown): boolean {
    return this.deps.page.dialogOpen(view);
  }

  /** Submits the Abort dialog Glidepath opened last (the person read it and pressed Abort); the page closes it. */
  async confirmAbort(by: Person, releaseId: string): Promise<boolean> {
    const view = this.abortDialog();
    if (!view) return false;
    this.deps.say(`→ ${releaseId} · the Abort dialog asks to confirm; ${by === 'you' ? 'you press Abort' : 'the sandbox presses Abort for you (--auto)'}`);
    await this.answered(by, releaseId, () => this.deps.sender.viewSubmission({ userId: PEOPLE[by].id, view }));
    this.deps.page.dialogAnswered(view);
    return true;
  }
}

/** A message in a channel (its ts and thread), or an answer only its person sees; `key` is the page's name for it. */
export function messageTarget(message: TranscriptMessage): ClickTarget {
  return { key: `m:${message.ts}`, channel: message.channel, messageTs: message.ts, ...(message.threadTs ? { threadTs: message.threadTs } : {}), text: message.text, blocks: message.blocks, ephemeral: false };
}
