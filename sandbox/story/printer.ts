/**
 * The terminal's view of the Slack stand-in: each new thread, each change to it, each reply, as a
 * person would read them, and every block headed by the release it belongs to (two releases of a
 * pipeline share a channel; a reply labelled by pipeline alone reads as the newest one's).
 */
import { describeMessage } from '../describe-message.js';
import type { Transcript, TranscriptMessage } from '../slack/transcript.js';
import { terminalText } from './terminal-text.js';

export interface PrintedButton {
  pipeline: string;
  releaseId: string;
  channel: string;
  message: TranscriptMessage;
  actionId: string;
  value: string;
}

/**
 * The release a message belongs to: the writer's message metadata, else the thread's title, else
 * (a Kargo Promotion's thread, an answer posted to the channel) what the thread follows.
 */
export function releaseOf(message: TranscriptMessage, parent: TranscriptMessage, fallback: () => string = () => 'no release'): string {
  const fromMeta = (m: TranscriptMessage) => {
    const r = m.metadata?.event_payload?.release;
    return typeof r === 'string' ? r : undefined;
  };
  const id = fromMeta(message) ?? fromMeta(parent);
  // A Freight's release goes by its alias in its header (`Release brave-lynx (Freight 512fea3) —`): so does the story.
  const alias = id?.startsWith('freight-') ? /^Release (\S+) \(Freight \w+\) /.exec(parent.text)?.[1] : undefined;
  return alias ?? id ?? /Release (\S+) —/.exec(parent.text)?.[1] ?? /Release (\S+) —/.exec(describeMessage(parent.text, parent.blocks))?.[1] ?? promotionOf(parent) ?? fallback();
}

function promotionOf(parent: TranscriptMessage): string | undefined {
  const name = /Promotion `([^`]+)`/.exec(describeMessage(parent.text, parent.blocks))?.[1];
  return name ? `promotion ${name}` : undefined;
}

/**
 * A file share in one line, by its title: the chart of a failed analysis, or the release's
 * timeline (its file name says which). The image itself is in the page.
 */
export function fileLine(file: { name: string; title: string }): string {
  return `📈 ${file.name === 'release-timeline.png' ? 'timeline' : 'chart'}: ${file.title} (the image is in the page)`;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

/** What changed in an edited message: the lines `now` has that `before` did not, else the ones it lost. */
export function changedLines(before: string, now: string): string {
  const old = new Set(before.split('\n'));
  const added = now.split('\n').filter((l) => !old.has(l));
  if (added.length > 0) return added.join('\n');
  const kept = new Set(now.split('\n'));
  return before
    .split('\n')
    .filter((l) => !kept.has(l))
    .map((l) => `(gone) ${l}`)
    .join('\n');
}

export class TranscriptPrinter {
  private readonly shown = new Map<string, string>();
  private readonly buttonsSeen = new Set<string>();

  constructor(
    private readonly transcript: Transcript,
    private readonly pipelines: readonly { name: string; channel: string }[],
    private readonly out: (line: string) => void,
    private readonly clock: () => number,
    private readonly color = false,
    /** The release of a message that names none (an answer posted to the channel): the one last acted on. */
    private readonly fallbackRelease: () => string = () => 'no release',
  ) {}

  /** Prints what changed since the last call; returns the buttons that appeared. */
  print(): PrintedButton[] {
    const buttons: PrintedButton[] = [];
    for (const pipeline of this.pipelines) {
      for (const parent of this.transcript.messages(pipeline.channel)) {
        for (const m of [parent, ...parent.replies]) {
          const text = m.files?.length ? m.files.map(fileLine).join('\n') : terminalText(describeMessage(m.text, m.blocks), this.color);
          const before = this.shown.get(m.ts);
          if (before === text) continue;
          this.shown.set(m.ts, text);
          const releaseId = releaseOf(m, parent, this.fallbackRelease);
          const isParent = m === parent;
          const what = isParent ? (before === undefined ? 'new thread' : 'thread updated') : before === undefined ? 'reply' : 'reply edited';
          const body = before === undefined ? text : changedLines(before, text);
          const time = new Date(this.clock()).toISOString().slice(11, 19);
          this.out(`[${time}] ${releaseId} · ${pipeline.name} — ${what}:\n${indent(body, isParent ? '  │ ' : '  ↳ ')}\n`);
          for (const b of m.blocks as { type?: string; elements?: { action_id?: string; value?: string }[] }[]) {
            if (b.type !== 'actions') continue;
            for (const e of b.elements ?? []) {
              const key = `${m.ts}/${e.action_id}`;
              if (!e.action_id || !e.value || this.buttonsSeen.has(key)) continue;
              this.buttonsSeen.add(key);
              buttons.push({ pipeline: pipeline.name, releaseId, channel: pipeline.channel, message: m, actionId: e.action_id, value: e.value });
            }
          }
        }
      }
    }
    return buttons;
  }
}
