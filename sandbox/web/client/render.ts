/**
 * Block Kit and Slack mrkdwn to DOM nodes, as Slack draws them: emoji shortcodes, *bold*,
 * _italic_, ~strike~, `code`, ```blocks```, > quotes, links <url|text>, mentions <@U…> and <#C…>,
 * dates <!date^…>, headers, sections with fields, context, dividers and buttons.
 * Every text is untrusted (it comes from the clusters): it only ever becomes a text node, and only
 * http(s) URLs become links.
 */
import type { Block, PageFile } from './page-state.js';

export interface RenderContext {
  users: Record<string, string>;
  channels: Record<string, string>;
  /** Called when a button is clicked (after its confirm dialog, if it has one). */
  onButton?: (button: Block) => void;
  /** Shows a button's `confirm` object; resolves true when the person confirms. */
  confirm?: (confirm: Block) => Promise<boolean>;
}

/** The shortcodes Glidepath uses, and a few more a person may type. Others stay as :text:. */
const EMOJI: Record<string, string> = {
  x: '❌', warning: '⚠️', white_check_mark: '✅', heavy_check_mark: '✔️', information_source: 'ℹ️', no_entry: '⛔',
  arrows_counterclockwise: '🔄', hourglass_flowing_sand: '⏳', hourglass: '⌛', double_vertical_bar: '⏸️', pushpin: '📌',
  white_circle: '⚪', large_green_circle: '🟢', red_circle: '🔴', large_yellow_circle: '🟡', tada: '🎉', mega: '📣',
  fast_forward: '⏩', ear: '👂', arrow_forward: '▶️', arrow_right: '➡️', rocket: '🚀', eyes: '👀', lock: '🔒', bell: '🔔',
  rotating_light: '🚨', stopwatch: '⏱️', package: '📦', link: '🔗', memo: '📝', bulb: '💡', question: '❓', exclamation: '❗',
  zap: '⚡', fire: '🔥', sparkles: '✨', robot_face: '🤖', gear: '⚙️', thumbsup: '👍', '+1': '👍', wave: '👋', ship: '🚢',
  construction: '🚧', leftwards_arrow_with_hook: '↩️', heavy_minus_sign: '➖', mag: '🔍', clipboard: '📋',
};

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function emojify(text: string): string {
  return text.replace(/:([a-z0-9_+'-]+):/g, (whole, name: string) => EMOJI[name] ?? whole);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Only absolute http(s) URLs are followed; anything else stays text. */
function safeHref(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
}

/** Slack's <!date^seconds^format|fallback>, in the reader's own time zone; an unknown token shows the fallback. */
export function formatSlackDate(seconds: number, format: string, fallback: string, now = new Date()): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) return fallback;
  const pad = (n: number) => String(n).padStart(2, '0');
  const month = MONTHS[d.getMonth()] ?? '';
  const dayDiff = Math.round((new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime() - new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime()) / 86_400_000);
  const pretty = (long: string) => (dayDiff === 0 ? 'today' : dayDiff === 1 ? 'yesterday' : dayDiff === -1 ? 'tomorrow' : long);
  const tokens: Record<string, string> = {
    date_num: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`,
    date: `${month} ${ordinal(d.getDate())}, ${d.getFullYear()}`,
    date_short: `${month.slice(0, 3)} ${d.getDate()}, ${d.getFullYear()}`,
    date_long: `${d.toLocaleDateString('en-US', { weekday: 'long' })}, ${month} ${ordinal(d.getDate())}, ${d.getFullYear()}`,
    time: `${pad(d.getHours())}:${pad(d.getMinutes())}`,
    time_secs: `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`,
  };
  tokens.date_pretty = pretty(tokens.date ?? '');
  tokens.date_short_pretty = pretty(tokens.date_short ?? '');
  tokens.date_long_pretty = pretty(tokens.date_long ?? '');
  let unknown = false;
  const out = format.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = tokens[name];
    if (value === undefined) unknown = true;
    return value ?? '';
  });
  return unknown ? fallback : out.replace(/^(today|yesterday|tomorrow)/, (w) => w[0]!.toUpperCase() + w.slice(1));
}

/** One <…> token: a link, a mention, a date or a special mention. */
function angle(inner: string, ctx: RenderContext): Node {
  const [target = '', label] = splitOnce(inner, '|');
  if (target.startsWith('@')) {
    const id = target.slice(1);
    return el('span', 'mention', `@${ctx.users[id] ?? label ?? id}`);
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    return el('span', 'mention', `#${ctx.channels[id] ?? label ?? id}`);
  }
  if (target.startsWith('!date^')) {
    const [, seconds = '', format = '', link] = target.split('^');
    const text = formatSlackDate(Number(seconds), format, decodeEntities(label ?? ''));
    const href = link ? safeHref(decodeEntities(link)) : undefined;
    return href ? anchor(href, text) : el('time', 'date', text);
  }
  if (target.startsWith('!subteam^')) return el('span', 'mention', `@${label ?? target.slice(9)}`);
  if (target.startsWith('!')) return el('span', 'mention', `@${label ?? target.slice(1)}`);
  const href = safeHref(decodeEntities(target));
  const text = decodeEntities(label ?? target);
  return href ? anchor(href, text) : document.createTextNode(`<${decodeEntities(inner)}>`);
}

function anchor(href: string, text: string): HTMLAnchorElement {
  const a = el('a', undefined, text);
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  a.title = href;
  return a;
}

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}

/**
 * Inline mrkdwn: the earliest token wins; bold, italic and strike need a word boundary on both
 * sides (snake_case stays as typed) and do not cross lines.
 */
const INLINE = /<([^<>\n]+)>|`([^`\n]+)`|(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])|(?<![\w~])~(?=\S)([^~\n]*?\S)~(?![\w~])/g;

function inline(raw: string, ctx: RenderContext, into: Node): void {
  let last = 0;
  for (const m of raw.matchAll(INLINE)) {
    const at = m.index;
    if (at > last) into.appendChild(document.createTextNode(emojify(decodeEntities(raw.slice(last, at)))));
    const [, token, code, bold, italic, strike] = m;
    if (token !== undefined) into.appendChild(angle(token, ctx));
    else if (code !== undefined) into.appendChild(el('code', undefined, decodeEntities(code)));
    else {
      const node = el(bold !== undefined ? 'b' : italic !== undefined ? 'i' : 's');
      inline(bold ?? italic ?? strike ?? '', ctx, node);
      into.appendChild(node);
    }
    last = at + m[0].length;
  }
  if (last < raw.length) into.appendChild(document.createTextNode(emojify(decodeEntities(raw.slice(last)))));
}

/** A mrkdwn text: ``` blocks, then lines (a raw `>` starts a quote; Glidepath escapes every untrusted one). */
export function mrkdwn(raw: string, ctx: RenderContext): DocumentFragment {
  const out = document.createDocumentFragment();
  const parts = raw.split(/```([\s\S]*?)```/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out.appendChild(el('pre', 'code-block', decodeEntities(part.replace(/^\n/, ''))));
      return;
    }
    let quote: HTMLElement | undefined;
    part.split('\n').forEach((line, n, lines) => {
      if (line.startsWith('>')) {
        if (!quote) {
          quote = el('blockquote');
          out.appendChild(quote);
        } else quote.appendChild(el('br'));
        inline(line.slice(1).replace(/^ /, ''), ctx, quote);
        return;
      }
      quote = undefined;
      inline(line, ctx, out);
      if (n < lines.length - 1 && !lines[n + 1]?.startsWith('>')) out.appendChild(el('br'));
    });
  });
  return out;
}

/** A text object: mrkdwn, or plain_text (emoji converted unless `emoji: false`). */
export function textObject(value: unknown, ctx: RenderContext): Node {
  const t = (value && typeof value === 'object' ? value : {}) as Block;
  if (t.type === 'mrkdwn') return mrkdwn(str(t.text), ctx);
  return document.createTextNode(t.emoji === false ? str(t.text) : emojify(str(t.text)));
}

function button(b: Block, ctx: RenderContext): HTMLButtonElement {
  const style = str(b.style);
  const node = el('button', `btn${style ? ` btn-${style}` : ''}`);
  node.type = 'button';
  node.append(textObject(b.text, ctx));
  node.dataset.actionId = str(b.action_id);
  if (b.url) node.title = str(b.url);
  node.addEventListener('click', () => {
    void (async () => {
      if (b.confirm && ctx.confirm && !(await ctx.confirm(b.confirm as Block))) return;
      ctx.onButton?.(b);
    })();
  });
  return node;
}

function elementsOf(value: unknown): Block[] {
  return Array.isArray(value) ? (value.filter((e) => e && typeof e === 'object') as Block[]) : [];
}

/** One block; unknown types are shown as such rather than dropped, so nothing is silently missing. */
export function renderBlock(block: Block, ctx: RenderContext): HTMLElement {
  switch (block.type) {
    case 'header':
      return el('div', 'block-header', textObject(block.text, ctx));
    case 'divider':
      return el('hr', 'block-divider');
    case 'section': {
      const node = el('div', 'block-section');
      const body = el('div', 'section-body');
      if (block.text) body.appendChild(el('div', 'section-text', textObject(block.text, ctx)));
      const fields = elementsOf(block.fields);
      if (fields.length) body.appendChild(el('div', 'section-fields', ...fields.map((f) => el('div', 'field', textObject(f, ctx)))));
      node.appendChild(body);
      const accessory = block.accessory as Block | undefined;
      if (accessory?.type === 'button') node.appendChild(el('div', 'accessory', button(accessory, ctx)));
      return node;
    }
    case 'context':
      return el(
        'div',
        'block-context',
        ...elementsOf(block.elements).map((e) => (e.type === 'image' ? el('span', 'context-image', '▣') : el('span', 'context-item', textObject(e, ctx)))),
      );
    case 'actions':
      return el('div', 'block-actions', ...elementsOf(block.elements).map((e) => (e.type === 'button' ? button(e, ctx) : el('span', 'unsupported', `[${str(e.type)}]`))));
    case 'input': {
      const label = el('label', 'input-label', textObject(block.label, ctx));
      const element = (block.element ?? {}) as Block;
      const input = element.multiline ? el('textarea') : el('input');
      input.className = 'input-field';
      input.dataset.blockId = str(block.block_id);
      input.dataset.actionId = str(element.action_id);
      if (element.placeholder) input.placeholder = str((element.placeholder as Block).text);
      return el('div', 'block-input', label, input);
    }
    default:
      return el('div', 'unsupported', `[${str(block.type) || 'block'} block]`);
  }
}

/** A message: its blocks, or its text when it has none (as Slack falls back). */
export function renderMessageBody(text: string, blocks: Block[], ctx: RenderContext): HTMLElement {
  const body = el('div', 'message-body');
  if (blocks.length === 0) body.appendChild(el('div', 'block-section', el('div', 'section-text', mrkdwn(text, ctx))));
  for (const block of blocks) body.appendChild(renderBlock(block, ctx));
  return body;
}

/**
 * Shared images, as Slack shows a file share: the title above, the image below it, its alt text
 * for what it shows (and the tooltip). Only this page's own /files/ URLs are loaded.
 */
export function renderFiles(files: PageFile[]): HTMLElement {
  const node = el('div', 'message-files');
  for (const f of files) {
    const figure = el('figure', 'shared-file', el('figcaption', 'file-title', f.title));
    figure.dataset.fileId = f.id;
    if (f.url.startsWith('/files/')) {
      const img = el('img', 'shared-image');
      img.src = f.url;
      img.alt = f.alt;
      img.title = f.alt;
      figure.appendChild(img);
    }
    node.appendChild(figure);
  }
  return node;
}

export { el };
