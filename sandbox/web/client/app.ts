/**
 * The sandbox page: channels, threads, the App Home and dialogs, redrawn from each state the
 * server sends (server-sent events), and what the person does posted back as JSON for the server
 * to sign and send to Glidepath. Every text goes through render.ts (text nodes only).
 */
import type { ActAnswer, Block, PageItem, PageModal, PageState } from './page-state.js';
import { el, emojify, mrkdwn, renderBlock, renderFiles, renderMessageBody, type RenderContext } from './render.js';

type View = { kind: 'channel'; id: string } | { kind: 'home' };

let state: PageState | undefined;
let view: View | undefined;
/** The thread open on the right: chosen by the person (null: closed), else the one with the latest activity. */
let pickedThread: string | null | undefined;
let shownModal: string | undefined;
const lastSeen = new Map<string, number>();

const $ = (id: string): HTMLElement => {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node;
};

function clear(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

async function act(path: string, body: unknown): Promise<ActAnswer> {
  try {
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await res.json()) as ActAnswer;
    if (!answer.ok && !answer.errors) toast(answer.error ?? `the sandbox answered HTTP ${res.status}`);
    return answer;
  } catch (err) {
    toast(`could not reach the sandbox: ${err instanceof Error ? err.message : String(err)}`);
    return { ok: false };
  }
}

function toast(text: string): void {
  const node = el('div', 'toast', text);
  $('toasts').appendChild(node);
  setTimeout(() => node.remove(), 8000);
}

function context(item?: PageItem): RenderContext {
  const s = state;
  return {
    users: s?.users ?? {},
    channels: Object.fromEntries((s?.channels ?? []).map((c) => [c.id, c.name])),
    confirm: confirmDialog,
    onButton: (button) => {
      if (!item) return;
      void act('/act/click', { key: item.key, actionId: String(button.action_id ?? ''), value: String(button.value ?? '') });
    },
  };
}

function clock(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

function author(item: PageItem): { name: string; initial: string; app: boolean } {
  return item.kind === 'slackbot' ? { name: 'Slackbot', initial: 'S', app: false } : { name: 'Glidepath', initial: 'G', app: true };
}

function renderItem(item: PageItem, replies: PageItem[] = [], inThread = false): HTMLElement {
  const who = author(item);
  const node = el('div', `message message-${item.kind}`);
  node.dataset.key = item.key;
  const avatar = el('div', `avatar avatar-${item.kind === 'slackbot' ? 'slackbot' : 'app'}`, who.initial);
  const head = el('div', 'message-head', el('span', 'author', who.name));
  if (who.app) head.appendChild(el('span', 'app-badge', 'APP'));
  const time = el('time', 'message-time', clock(item.at));
  time.title = new Date(item.at).toString();
  head.appendChild(time);
  const content = el('div', 'message-content', head);
  // An answer to the sandbox's own command (--auto) is its, not yours: Slack would show it to that user only.
  const whose = item.by ? `@${item.by}` : 'you';
  if (item.kind === 'ephemeral' || item.kind === 'slackbot') {
    content.insertBefore(el('div', 'only-you', `👁 Only visible to ${whose}${item.inAnswerTo ? ` · ${item.inAnswerTo}` : ''}`), head);
  } else if (item.inAnswerTo) {
    content.insertBefore(el('div', 'only-you', `${item.by ? whose : (state?.you.name ?? 'you')} used ${item.inAnswerTo}`), head);
  }
  // A file share has no text of its own: its images are the message.
  if (!item.files?.length || item.text || item.blocks.length) content.appendChild(renderMessageBody(item.text, item.blocks, context(item)));
  if (item.files?.length) content.appendChild(renderFiles(item.files));
  if (item.edits > 0) content.appendChild(el('span', 'edited', '(edited)'));
  if (!inThread && replies.length > 0) {
    const last = replies[replies.length - 1]!;
    const link = el('button', 'thread-summary', el('span', 'reply-count', `${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}`), el('span', 'last-reply', `Last reply ${clock(last.at)}`));
    link.type = 'button';
    link.addEventListener('click', () => {
      pickedThread = item.ts;
      draw();
    });
    content.appendChild(link);
  }
  node.append(avatar, content);
  return node;
}

/** Keeps the list pinned to the bottom when it was there, as Slack does while you read the latest. */
function redrawScrolled(container: HTMLElement, fill: (into: HTMLElement) => void): void {
  const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
  const top = container.scrollTop;
  clear(container);
  fill(container);
  container.scrollTop = atBottom ? container.scrollHeight : top;
}

function drawSidebar(s: PageState): void {
  const list = $('channel-list');
  clear(list);
  for (const c of s.channels) {
    const unread = s.items.filter((i) => i.channel === c.id && i.order > (lastSeen.get(c.id) ?? -1)).length;
    const entry = el('button', `channel${view?.kind === 'channel' && view.id === c.id ? ' active' : ''}${unread ? ' unread' : ''}`, el('span', 'hash', '#'), el('span', 'channel-name', c.name));
    entry.type = 'button';
    entry.dataset.channel = c.id;
    if (unread) entry.appendChild(el('span', 'badge', String(unread)));
    entry.addEventListener('click', () => {
      view = { kind: 'channel', id: c.id };
      pickedThread = undefined;
      draw();
    });
    list.appendChild(entry);
  }
  $('home-link').classList.toggle('active', view?.kind === 'home');
}

function drawChannel(s: PageState, channelId: string): void {
  const channel = s.channels.find((c) => c.id === channelId);
  clear($('main-header'));
  $('main-header').append(el('div', 'main-title', `# ${channel?.name ?? channelId}`), el('div', 'main-topic', channel?.topic ?? ''));
  const items = s.items.filter((i) => i.channel === channelId);
  const top = items.filter((i) => !i.threadTs);
  const repliesOf = (ts: string | undefined) => (ts ? items.filter((i) => i.threadTs === ts) : []);
  redrawScrolled($('messages'), (into) => {
    if (top.length === 0) into.appendChild(el('div', 'empty', 'Nothing here yet: Glidepath posts a thread when a release starts.'));
    for (const item of top) into.appendChild(renderItem(item, repliesOf(item.ts)));
  });
  lastSeen.set(channelId, Math.max(-1, ...items.map((i) => i.order)));
  ($('composer-input') as HTMLInputElement).placeholder = `Message #${channel?.name ?? channelId} — try /glidepath status`;
  $('composer').hidden = false;

  // The thread pane: the one picked, else the thread with the latest activity.
  const latest = (ts: string | undefined) => Math.max(...[...repliesOf(ts), ...top.filter((t) => t.ts === ts)].map((i) => i.order));
  const threads = top.filter((t) => repliesOf(t.ts).length > 0);
  const open = pickedThread === null ? undefined : pickedThread ? top.find((t) => t.ts === pickedThread) : threads.sort((a, b) => latest(b.ts) - latest(a.ts))[0];
  const pane = $('thread');
  pane.hidden = !open;
  if (!open) return;
  clear($('thread-title'));
  $('thread-title').append(el('span', undefined, 'Thread'), el('span', 'thread-channel', `# ${channel?.name ?? channelId}`));
  redrawScrolled($('thread-messages'), (into) => {
    const replies = repliesOf(open.ts);
    into.appendChild(renderItem(open, [], true));
    into.appendChild(el('div', 'reply-divider', `${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}`));
    for (const r of replies) into.appendChild(renderItem(r, [], true));
  });
}

function drawHome(s: PageState): void {
  clear($('main-header'));
  $('main-header').append(el('div', 'main-title', 'Glidepath'), el('div', 'main-topic', 'App Home — as Glidepath last published it for you (views.publish)'));
  $('composer').hidden = true;
  $('thread').hidden = true;
  redrawScrolled($('messages'), (into) => {
    const blocks = Array.isArray(s.home?.blocks) ? (s.home.blocks as Block[]) : [];
    if (blocks.length === 0) into.appendChild(el('div', 'empty', 'Waiting for Glidepath to publish the Home tab…'));
    const home = el('div', 'home-view');
    for (const b of blocks) home.appendChild(renderBlock(b, context()));
    into.appendChild(home);
  });
}

/** What the sandbox's story waits for you to do, above everything, until it is done. */
function drawWaiting(lines: string[]): void {
  const bar = $('story-bar');
  clear(bar);
  bar.hidden = lines.length === 0;
  if (lines.length === 0) return;
  bar.appendChild(el('div', 'story-title', 'The story waits for you:'));
  for (const line of lines) bar.appendChild(el('div', 'story-line', line));
}

function draw(): void {
  const s = state;
  if (!s) return;
  view ??= { kind: 'channel', id: s.channels[0]?.id ?? '' };
  // A dialog opens over the channel it was opened from (Slack shows it where you typed or clicked).
  if (s.modal && s.modal.id !== shownModal && s.modal.channel && s.channels.some((c) => c.id === s.modal?.channel)) {
    if (view.kind !== 'channel' || view.id !== s.modal.channel) pickedThread = undefined;
    view = { kind: 'channel', id: s.modal.channel };
  }
  drawWaiting(s.waiting ?? []);
  drawSidebar(s);
  if (view.kind === 'home') drawHome(s);
  else drawChannel(s, view.id);
  drawSidebar(s);
  drawModal(s.modal);
}

/** A button's `confirm` object, as Slack asks before it sends the click. */
function confirmDialog(confirm: Block): Promise<boolean> {
  const dialog = $('confirm') as HTMLDialogElement;
  const ctx = context();
  clear(dialog);
  const yes = el('button', `btn ${confirm.style === 'danger' ? 'btn-danger' : 'btn-primary'}`, textOf(confirm.confirm, 'Confirm', ctx));
  const no = el('button', 'btn', textOf(confirm.deny, 'Cancel', ctx));
  dialog.append(el('div', 'dialog-title', textOf(confirm.title, 'Are you sure?', ctx)), el('div', 'dialog-body', textOf(confirm.text, '', ctx)), el('div', 'dialog-buttons', no, yes));
  dialog.showModal();
  return new Promise((resolve) => {
    const done = (answer: boolean) => {
      dialog.close();
      resolve(answer);
    };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    dialog.oncancel = () => resolve(false);
  });
}

function textOf(value: unknown, fallback: string, ctx: RenderContext): Node {
  const t = value as { type?: string; text?: string } | undefined;
  if (!t?.text) return document.createTextNode(fallback);
  return t.type === 'mrkdwn' ? mrkdwn(t.text, ctx) : document.createTextNode(emojify(t.text));
}

/** A views.open modal: shown until you submit or close it (or Glidepath opens another). */
function drawModal(modal: PageModal | undefined): void {
  const dialog = $('modal') as HTMLDialogElement;
  if (!modal) {
    if (dialog.open) dialog.close();
    shownModal = undefined;
    return;
  }
  if (shownModal === modal.id) return;
  shownModal = modal.id;
  const ctx = context();
  const v = modal.view;
  clear(dialog);
  const body = el('div', 'modal-body');
  for (const b of Array.isArray(v.blocks) ? (v.blocks as Block[]) : []) body.appendChild(renderBlock(b, ctx));
  const errors = el('div', 'modal-errors');
  const close = el('button', 'btn', textOf(v.close, 'Cancel', ctx));
  const submit = el('button', 'btn btn-primary', textOf(v.submit, 'Submit', ctx));
  close.type = submit.type = 'button';
  dialog.append(el('div', 'dialog-title', textOf(v.title, 'Glidepath', ctx)), body, errors, el('div', 'dialog-buttons', close, ...(v.submit ? [submit] : [])));
  const closeIt = () => void act('/act/view', { modalId: modal.id, action: 'close' });
  close.addEventListener('click', closeIt);
  dialog.oncancel = (e) => {
    e.preventDefault();
    closeIt();
  };
  submit.addEventListener('click', () => {
    void (async () => {
      const values: Record<string, Record<string, string>> = {};
      for (const input of dialog.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('.input-field')) {
        const block = input.dataset.blockId ?? '';
        values[block] = { ...values[block], [input.dataset.actionId ?? '']: input.value };
      }
      submit.disabled = true;
      const answer = await act('/act/view', { modalId: modal.id, action: 'submit', values });
      submit.disabled = false;
      clear(errors);
      for (const [block, message] of Object.entries(answer.errors ?? {})) errors.appendChild(el('div', undefined, `${block}: ${message}`));
    })();
  });
  if (!dialog.open) dialog.showModal();
}

function start(): void {
  $('home-link').addEventListener('click', () => {
    view = { kind: 'home' };
    draw();
    // Slack sends app_home_opened each time the tab is opened; Glidepath publishes the view then.
    void act('/act/home', {});
  });
  $('thread-close').addEventListener('click', () => {
    pickedThread = null;
    $('thread').hidden = true;
  });
  const form = $('composer') as HTMLFormElement;
  const input = $('composer-input') as HTMLInputElement;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || view?.kind !== 'channel') return;
    input.value = '';
    void act('/act/command', { channel: view.id, text });
  });
  const events = new EventSource('/events');
  events.addEventListener('state', (e) => {
    state = JSON.parse((e as MessageEvent<string>).data) as PageState;
    $('status').textContent = 'live';
    $('status').className = 'status live';
    draw();
  });
  events.addEventListener('error', () => {
    $('status').textContent = 'reconnecting…';
    $('status').className = 'status down';
  });
}

start();
