/** Slack mrkdwn as a terminal shows it: the emoji Glidepath uses as characters, `*bold*` as bold. */
import { MENTION_NAMES } from './people.js';

const EMOJI: Record<string, string> = {
  x: '❌',
  warning: '⚠️ ',
  white_check_mark: '✅',
  information_source: 'ℹ️ ',
  no_entry: '⛔',
  arrows_counterclockwise: '🔄',
  hourglass_flowing_sand: '⏳',
  double_vertical_bar: '⏸️ ',
  pushpin: '📌',
  white_circle: '⚪',
  tada: '🎉',
  mega: '📣',
  fast_forward: '⏩',
  ear: '👂',
  arrow_forward: '▶️ ',
};

export function terminalText(mrkdwn: string, color: boolean): string {
  return (
    mrkdwn
      .replace(/:([a-z_]+):/g, (all, name: string) => EMOJI[name] ?? all)
      .replace(/<@(U[A-Z0-9]+)>/g, (_all, id: string) => `@${MENTION_NAMES[id] ?? id}`)
      // Links as a terminal can show them: the label, then the address.
      .replace(/<(https?:\/\/[^|>\s]+)\|([^>]+)>/g, (_all, url: string, label: string) => `${label} (${url})`)
      .replace(/<(https?:\/\/[^|>\s]+)>/g, (_all, url: string) => url)
      .replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,:;!?])/g, (_all, before: string, inner: string) => (color ? `${before}\u001b[1m${inner}\u001b[22m` : `${before}${inner}`))
      // Slack's three escapes last (`&lt;pipeline@stage&gt;` is what a person reads as <pipeline@stage>).
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  );
}
