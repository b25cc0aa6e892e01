/**
 * Text from a cluster (Rollout messages, names, Argo CD errors) is untrusted: escaped so that
 * `<!channel>` or `<@U123>` is shown, never acted on, and bounded so Slack never rejects the message.
 * Pure text, below everything that writes words for Slack: the renderer, the commands and the
 * action engine's thread lines and refusals all escape with these.
 */

/** What ends a cut text (and a list of blocks cut short), so a reader knows there is more. */
export const TRUNCATED = '… (truncated)';

/** Slack mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Cuts `text` to at most `max` characters, ending with a visible marker. Never cuts an escape
 * sequence (`&amp;`) in half, and never splits a surrogate pair.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= TRUNCATED.length) return TRUNCATED.slice(0, max);
  let cut = max - TRUNCATED.length;
  const amp = text.lastIndexOf('&', cut);
  if (amp >= 0 && amp >= cut - 5) {
    const semi = text.indexOf(';', amp);
    if (semi < 0 || semi >= cut) cut = amp;
  }
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return text.slice(0, cut) + TRUNCATED;
}

/** Escape, collapse to one line when asked, then bound: the order matters, escaping lengthens. */
export function untrusted(text: string | undefined, max: number, options: { oneLine?: boolean } = {}): string {
  if (text === undefined) return '';
  const clean = options.oneLine ? text.replace(/\s+/g, ' ').trim() : text.trim();
  return truncate(escapeMrkdwn(clean), max);
}

/** How much of a message from the cluster a reply quotes. */
const QUOTED_LIMIT = 2500;

/** A message from the cluster as a block quote on the lines after a reply's sentence (nothing when there is none). */
export function quoted(message: string | undefined): string {
  const text = untrusted(message, QUOTED_LIMIT);
  return text ? `\n>${text.replace(/\n/g, '\n>')}` : '';
}

/** Inline code span: backticks inside would end the span early, so they are replaced. */
export function code(text: string, max = 200): string {
  return '`' + untrusted(text.replace(/`/g, "'"), max, { oneLine: true }) + '`';
}

/**
 * A Slack date token: each reader sees their own time zone. It shows minutes, so it is floored
 * to the minute: a heartbeat fact a few seconds later renders identical text, and the writer
 * sends nothing.
 */
export function slackDate(ms: number): string {
  const seconds = Math.floor(ms / 60_000) * 60;
  const iso = new Date(seconds * 1000).toISOString();
  const fallback = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return `<!date^${seconds}^{date_short_pretty} {time}|${fallback}>`;
}

/** Only http(s) URLs become links; anything else is shown as text. */
export function link(url: string | undefined, label: string): string {
  if (url === undefined) return '';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return untrusted(url, 200, { oneLine: true });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return untrusted(url, 200, { oneLine: true });
  const href = parsed.toString().replace(/\|/g, '%7C');
  if (href.length > 1000) return untrusted(label, 100);
  return `<${escapeMrkdwn(href)}|${untrusted(label, 100, { oneLine: true })}>`;
}
