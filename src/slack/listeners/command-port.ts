/**
 * What the Slack edge hands the commands and what it calls on them: the per-request context
 * (services, who asks, the Slack surface) and the handlers behind /glidepath and the buttons. The
 * composition root (src/wiring/slack.ts) passes commands/handlers.ts in, so src/slack never
 * imports commands/ (the data flows one way: Slack → commands → the action engine → cluster).
 */
import type { ViewsOpenArguments } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { ConfigFile } from '../../config/file.js';
import type { KubeReads } from '../../kube/reads-by-cluster.js';
import type { ClusterClients } from '../../kube/clusters.js';
import type { GroupDirectory } from '../../policy/permissions.js';
import type { IdentityMap } from '../../policy/identity.js';
import type { ReleaseReader } from '../../releases/store/ports.js';
import type { OwnActions } from '../../releases/store/own-actions.js';
import type { DeliveryReader } from '../../releases/store/delivery-stats.js';
import type { ApprovalStore } from '../../actions/approvals.js';
import type { ChannelProblems } from '../channel-problems.js';
import type { Rejections } from '../../actions/rejections.js';
import type { Outcome, ThreadLocator } from '../../actions/types.js';
import type { AbortDialogMetadata, ApproveClick, PromoteButtonValue, PromoteConfirmValue, RefreshApproveValue, RejectDialogMetadata } from '../buttons.js';

export interface SlackText {
  text: string;
  blocks?: unknown[];
}

/** The services every subcommand shares (built once per process). */
export interface CommandServices {
  config: ConfigFile;
  releases: ReleaseReader;
  /** The delivery roll-ups (/glidepath stats); absent: stats says they are not kept here. */
  delivery?: DeliveryReader;
  kube: KubeReads;
  /** For the few plain reads the operations do not cover (a Rollout before a typed approve). */
  clusters: ClusterClients;
  audit: AuditLog;
  approvals: ApprovalStore;
  /** Where actions are recorded before they are sent, so the thread tells them from changes made outside Glidepath. */
  ownActions?: OwnActions;
  /** Steps held with a reason (/glidepath reject, the Reject button), kept through restarts. */
  rejections?: Rejections;
  groups: GroupDirectory;
  /** Who each Slack user is in Kubernetes, for clusters with `authorization: kubernetes` or `both`. */
  identities: IdentityMap;
  threads: ThreadLocator;
  /** Channels Slack said the bot cannot post in, by pipeline (status names them). */
  channelProblems?: ChannelProblems;
  logger: Logger;
  now?: () => number;
  /** How long promote follows a Promotion, and the default freshness --refresh timeout. */
  followTimeoutMs?: number;
}

/** The Slack side of one request, as the subcommand may use it. */
export interface SlackSurface {
  /** Answer to the person (response_url; visible to the channel when `inChannel`). */
  reply(message: SlackText & { inChannel?: boolean; replaceOriginal?: boolean }): Promise<void>;
  /** A channel message (the request's channel unless `at` says otherwise) that can be updated in place. */
  post(message: SlackText, at?: { channel: string; threadTs?: string }): Promise<{ channel: string; ts: string }>;
  update(ref: { channel: string; ts: string }, message: SlackText): Promise<void>;
  /** A modal (needs the request's trigger_id). */
  openDialog(view: ViewsOpenArguments['view']): Promise<void>;
}

export interface CommandContext extends CommandServices {
  user: { id: string; name?: string };
  channel: string;
  slack: SlackSurface;
  /**
   * The message whose button was clicked, when the request is a click. A successful click edits
   * that message to say who did what; in the release's own thread that edit is the thread's line.
   */
  clicked?: { channel: string; threadTs?: string };
}

/**
 * A click's answer: the outcome when an action was attempted (the listener marks the clicked
 * message when it went through), and the message to show either way.
 */
export interface ClickAnswer {
  outcome?: Outcome<unknown>;
  message: SlackText;
}

/** What the listeners call: each translates one Slack request; the composition root supplies them. */
export interface CommandHandlers {
  /** `/glidepath <text>`. */
  dispatch(ctx: CommandContext, text: string): Promise<void>;
  approveClicked(ctx: CommandContext, value: ApproveClick): Promise<ClickAnswer>;
  refreshAndApprove(ctx: CommandContext, value: RefreshApproveValue): Promise<ClickAnswer>;
  abortConfirmed(ctx: CommandContext, meta: Pick<AbortDialogMetadata, 'c' | 'ns' | 'n' | 'h'>): Promise<ClickAnswer>;
  confirmPromote(ctx: CommandContext, value: PromoteConfirmValue): Promise<SlackText>;
  /** The line for the clicked message, or undefined when it answered with a refusal instead. */
  promoteClicked(ctx: CommandContext, value: PromoteButtonValue): Promise<string | undefined>;
  /** The Reject button: opens the dialog that asks for the reason. */
  rejectClicked(ctx: CommandContext, value: ApproveClick): Promise<void>;
  /** The reject dialog's submit, with the reason typed. */
  rejectConfirmed(ctx: CommandContext, meta: RejectDialogMetadata, reason: string): Promise<ClickAnswer>;
}

/** The commands as the listeners get them: the services every request shares, and the handlers. */
export interface CommandPort {
  services: CommandServices;
  handlers: CommandHandlers;
}
