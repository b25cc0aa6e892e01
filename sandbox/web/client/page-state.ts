/**
 * What the sandbox's web server sends the page (as server-sent events) and what the page posts
 * back. Shared by sandbox/web/server.ts and the page's own code: types only, no DOM, no Node.
 */

/** Block Kit as received from Glidepath: untrusted JSON, rendered defensively. */
export type Block = Record<string, unknown>;

/** Who wrote an item and who sees it. */
export type ItemKind =
  /** A message the bot posted (chat.postMessage), edited in place by chat.update. */
  | 'message'
  /** Only you see it: chat.postEphemeral, or a response_url answer without response_type in_channel. */
  | 'ephemeral'
  /** A response_url answer with response_type in_channel: everyone in the channel sees it. */
  | 'in-channel'
  /** The sandbox page's own note to you (Slackbot's voice), e.g. an unknown command. */
  | 'slackbot';

export interface PageItem {
  /** Stable across updates: `m:<ts>` for messages, `e:<n>` for ephemerals, `r:<n>` for responses. */
  key: string;
  kind: ItemKind;
  channel: string;
  /** The parent's ts when the item is a thread reply. */
  threadTs?: string;
  /** Set for top-level messages: what a reply's threadTs points to. */
  ts?: string;
  text: string;
  blocks: Block[];
  /** Wall-clock ms of the item's current version. */
  at: number;
  /** How many times it was edited (chat.update, replace_original). */
  edits: number;
  /** The slash command this answers, when it answers one (shown above an ephemeral answer). */
  inAnswerTo?: string;
  /** Who sent the command or click this answers, when not you: the sandbox acting with --auto. */
  by?: string;
  /** Ascending in the order the items first appeared. */
  order: number;
  /** A file share (files.completeUploadExternal): the images it carries, drawn below the text. */
  files?: PageFile[];
}

/** A shared image: the page GETs its bytes from this server (`url`, same origin, image/png). */
export interface PageFile {
  id: string;
  title: string;
  /** What the image shows, in words (Slack's alt text); the title when the upload gave none. */
  alt: string;
  url: string;
}

export interface PageChannel {
  id: string;
  name: string;
  /** What the channel is for (the pipelines posting there). */
  topic: string;
}

/** A modal Glidepath opened with views.open, waiting for you to submit or close it. */
export interface PageModal {
  id: string;
  view: Block;
  /** The channel of the command or click that opened it: the page shows that channel under it. */
  channel?: string;
}

export interface PageState {
  you: { id: string; name: string };
  /** Display names for user mentions (<@U…>). */
  users: Record<string, string>;
  channels: PageChannel[];
  items: PageItem[];
  /** Your App Home tab as Glidepath last published it (views.publish). */
  home?: Block;
  modal?: PageModal;
  /** What the sandbox's story waits for you to do, one line each (empty: nothing). */
  waiting: string[];
}

/** POST /act/command */
export interface CommandRequest {
  channel: string;
  /** What you typed, e.g. `/glidepath status`. */
  text: string;
}

/** POST /act/click: the button is found again on the item, as Slack only sends what it shows. */
export interface ClickRequest {
  key: string;
  actionId: string;
  value: string;
}

/** POST /act/view: submit or close the open modal. */
export interface ViewRequest {
  modalId: string;
  action: 'submit' | 'close';
  /** Input values by block_id and action_id (plain_text_input only). */
  values?: Record<string, Record<string, string>>;
}

/** The answer to every POST /act/*: ok, or the reason shown to you. */
export interface ActAnswer {
  ok: boolean;
  error?: string;
  /** A modal's validation errors (response_action: errors), by block_id. */
  errors?: Record<string, string>;
}
