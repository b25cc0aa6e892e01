/**
 * The person in the story: types /glidepath commands, clicks buttons and submits the Abort
 * dialog as signed Slack requests, exactly as Slack sends them, and prints what Glidepath
 * answered (response_url and ephemeral answers), naming the release each action is about.
 */
import { ABORT_DIALOG_CALLBACK_ID } from '../../src/slack/buttons.js';
import type { SandboxSlackSender } from '../slack/mode.js';
import type { SlackStandIn } from '../slack/server.js';
import type { TranscriptMessage } from '../slack/transcript.js';
import { describeMessage } from '../describe-message.js';
import { changedLines } from './printer.js';
import { terminalText } from './terminal-text.js';

export const YOU = 'U0SANDBOX';

export interface ActorDeps {
  sender: SandboxSlackSender;
  slack: SlackStandIn;
  say: (line: string) => void;
  /** Waits this many story milliseconds (shortened by the speed). */
  sleep: (ms: number) => Promise<void>;
}

export class Actor {
  /** Answers printed so far: each is printed once, under the release of the action it answers. */
  private responses = 0;
  private ephemerals = 0;
  private lastRelease = '';
  private lastAnswer = '';

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
      this.deps.say(`  ${this.lastRelease} · Glidepath ${a.replaces ? 'updated its answer' : 'answered you'}:\n${terminalText(shown, false).replace(/^/gm, '    ')}`);
      this.lastAnswer = a.text;
    }
    return answers.map((a) => a.text);
  }

  /** The release the person acted on last, for answers that name none. */
  get currentRelease(): string {
    return this.lastRelease || 'no release';
  }

  /** Runs `send`, then prints the answers Glidepath gave within a few seconds. */
  private async answered(releaseId: string, send: () => Promise<unknown>): Promise<string[]> {
    const { slack } = this.deps;
    this.flush();
    this.lastRelease = releaseId;
    const views = slack.transcript.openedViews.length;
    await send();
    let answers: string[] = [];
    for (let i = 0; i < 50 && answers.length === 0 && slack.transcript.openedViews.length === views; i++) {
      await new Promise((r) => setTimeout(r, 100));
      answers = this.flush();
    }
    return answers;
  }

  async command(releaseId: string, channel: string, text: string): Promise<string[]> {
    this.deps.say(`→ ${releaseId} · you type: /glidepath ${text}`);
    return this.answered(releaseId, () => this.deps.sender.slashCommand({ command: '/glidepath', text, userId: YOU, channelId: channel, responseUrl: this.deps.slack.responseUrl() }));
  }

  async click(releaseId: string, channel: string, message: TranscriptMessage, button: { actionId: string; value: string; label: string }): Promise<string[]> {
    this.deps.say(`→ ${releaseId} · you click ${button.label}`);
    return this.answered(releaseId, () =>
      this.deps.sender.blockAction({
        actionId: button.actionId,
        value: button.value,
        userId: YOU,
        channelId: channel,
        messageTs: message.ts,
        ...(message.threadTs ? { threadTs: message.threadTs } : {}),
        messageText: message.text,
        messageBlocks: message.blocks,
        responseUrl: this.deps.slack.responseUrl(),
      }),
    );
  }

  /** Submits the Abort dialog Glidepath opened last (the person read it and pressed Abort). */
  async confirmAbort(releaseId: string): Promise<boolean> {
    const view = [...this.deps.slack.transcript.openedViews].reverse().find((v) => (v as { callback_id?: string }).callback_id === ABORT_DIALOG_CALLBACK_ID) as Record<string, unknown> | undefined;
    if (!view) return false;
    this.deps.say(`→ ${releaseId} · the Abort dialog asks you to confirm; you press Abort`);
    await this.answered(releaseId, () => this.deps.sender.viewSubmission({ userId: YOU, view }));
    return true;
  }
}
