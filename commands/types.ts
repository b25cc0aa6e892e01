/**
 * What a subcommand gets to work with. The Slack listener builds this per request; subcommands
 * never see Bolt, so they can be read (and tested) as plain functions of their words.
 */
import type { ViewsOpenArguments } from '@slack/web-api';
import type { Logger } from 'pino';
import type { AuditLog } from '../src/audit/audit-log.js';
import type { ConfigFile } from '../src/config/file.js';
import type { KubeReads } from '../src/kube/reads-by-cluster.js';
import type { ClusterClients } from '../src/kube/clusters.js';
import type { GroupDirectory } from '../src/policy/permissions.js';
import type { IdentityMap } from '../src/policy/identity.js';
import type { ReleaseReader } from '../src/releases/ports.js';
import type { OwnActions } from '../src/releases/own-actions.js';
import type { ApprovalStore } from '../src/actions/approvals.js';
import type { ThreadLocator } from '../src/actions/types.js';

export interface SlackText {
  text: string;
  blocks?: unknown[];
}

export type { ThreadLocator } from '../src/actions/types.js';

/** The services every subcommand shares (built once per process). */
export interface CommandServices {
  config: ConfigFile;
  releases: ReleaseReader;
  kube: KubeReads;
  /** For the few plain reads the operations do not cover (a Rollout before a typed approve). */
  clusters: ClusterClients;
  audit: AuditLog;
  approvals: ApprovalStore;
  /** Where actions are recorded before they are sent, so the thread tells them from changes made outside Glidepath. */
  ownActions?: OwnActions;
  groups: GroupDirectory;
  /** Who each Slack user is in Kubernetes, for clusters with `authorization: kubernetes` or `both`. */
  identities: IdentityMap;
  threads: ThreadLocator;
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

export interface Subcommand {
  name: string;
  /** One line: `approve <target>`. */
  usage: string;
  /** What it does, one sentence. */
  summary: string;
  examples: string[];
  run(ctx: CommandContext, text: string): Promise<void>;
}
