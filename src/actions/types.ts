/**
 * The action engine's vocabulary (docs/actions.md): a request names who asks, what they intend,
 * where, and what state they saw; each gate answers with a decision as a value; the intent does
 * the write; the outcome is what the person is told. Nothing here knows Slack beyond posting a
 * line in a release thread.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { ConfigFile } from '../config/file.js';
import type { ClusterClients } from '../kube/clusters.js';
import type { KubeApi } from '../kube/api.js';
import type { AccessAttributes, KubeIdentity } from '../kube/impersonation.js';
import type { ClusterAction, GroupDirectory } from '../policy/permissions.js';
import type { IdentityMap } from '../policy/identity.js';
import type { OwnActions } from '../releases/store/own-actions.js';
import type { FreshnessSnapshot } from '../kube/freshness-reader.js';
import type { ChildFreshness } from '../kube/freshness.js';
import type { ReleaseReader } from '../releases/store/ports.js';
import type { ApprovalStore } from './approvals.js';
import type { WindowSubject } from '../policy/sync-windows.js';
import type { ActionReads } from './reads.js';
import type { Rejections } from './rejections.js';

/** Where a release's thread lives in Slack. */
export interface ThreadLocator {
  get(pipeline: string, releaseId: string): Promise<{ channel: string; ts: string } | undefined>;
}

/** The configured stage that grants the right (and names the thread's pipeline). */
export interface StageRef {
  pipeline: ConfigFile['pipelines'][number];
  stage: ConfigFile['pipelines'][number]['stages'][number];
}

/** `checkout@prod`. */
export function stageLabel(where: StageRef): string {
  return `${where.pipeline.name}@${where.stage.name}`;
}

/** What the engine needs of its caller: the services, who asks, and a way to post a thread line. */
export interface ActionContext {
  config: ConfigFile;
  clusters: ClusterClients;
  audit: AuditLog;
  approvals: ApprovalStore;
  /** The release records: the approvals gate reads who wrote and merged a release. */
  releases?: ReleaseReader;
  ownActions?: OwnActions;
  /** Steps held with a reason (rejections.ts); none: nothing can be rejected, nothing is overridden. */
  rejections?: Rejections;
  groups: GroupDirectory;
  identities: IdentityMap;
  threads: ThreadLocator;
  logger: Logger;
  now?: () => number;
  user: { id: string; name?: string };
  /** The message whose button was clicked, when the request is a click (its edit is the thread's line). */
  clicked?: { channel: string; threadTs?: string };
  slack: { post(message: { text: string }, at?: { channel: string; threadTs?: string }): Promise<unknown> };
}

/** What the write did: it ran, or the cluster's state made Glidepath refuse (nothing was changed). */
export type SendResult<D> =
  | { kind: 'done'; summary: string; before?: unknown; after?: unknown }
  | { kind: 'refused'; reason: string; details: D; before?: unknown };

/**
 * One kind of write (intents.ts builds each): the permission it needs, the words for it, and the
 * write itself, given the cluster's API already set to send as the right identity.
 */
export interface Intent<D = unknown> {
  /** The permission the intent needs (a rejection needs what approving the same step needs). */
  action: ClusterAction;
  /** The action's name in the audit when it is not `action` (`reject`). */
  audited?: string;
  /** `prod/shop/checkout`, `prod/kargo-demo/prod`. */
  target: string;
  cluster: string;
  /** What the person asked for, in words: "approve step 2 of prod/shop/checkout". */
  describe: string;
  /** The permissions the write needs, asked of the cluster first when it decides (docs/actions.md). */
  writes: AccessAttributes[];
  /** The state the person saw, which approvals are tied to and lapse with: object + generation or revision + pod hash + step, or the Freight promoted. */
  expected?: string;
  /** The ApplicationSet whose children must be fresh before the write (RollingSync steps). */
  freshness?: { namespace: string; appSet: string; step: number; refusal(stale: ChildFreshness[]): { reason: string; details: D } };
  /** The Argo CD Applications the write syncs or refreshes: their AppProjects' syncWindows hold it (the freeze gate). Read through the action's reads, shared with the freshness gate. */
  syncs?: (reads: ActionReads) => Promise<WindowSubject[]> | WindowSubject[];
  /** `api` sends its writes as the person when the cluster decides, else as Glidepath. */
  send(api: KubeApi, as: KubeIdentity | undefined, read: { snapshot?: FreshnessSnapshot }): Promise<SendResult<D>>;
}

export interface ActionRequest<D = unknown> {
  intent: Intent<D>;
  where: StageRef;
  /** The release the action concerns (its thread gets the line, the audit names it). */
  releaseId?: string;
  /** Why, in the person's words (rejections and break-glass will need one). */
  reason?: string;
  /** Override an open config freeze (`--break-glass "why"`): the person must be in its breakGlass groups, and `reason` is required. */
  breakGlass?: boolean;
}

/** One gate's answer, kept in the audit entry. */
export type GateDecision =
  | { gate: 'permission'; allowed: true; via: string }
  | { gate: 'permission'; allowed: false; reason: string; failed?: true }
  | { gate: 'freshness'; allowed: true; checked: number }
  | { gate: 'freshness'; allowed: false; reason: string; stale: string[] }
  | { gate: 'freeze'; allowed: true; via: string; overridden?: { by: string; reason: string; freezes: string[] } }
  | { gate: 'freeze'; allowed: false; reason: string; until?: number }
  | { gate: 'approvals'; allowed: true; via: string }
  | { gate: 'approvals'; allowed: false; reason: string; first?: true }
  /** A standing rejection of the same state: the approval goes through and overrides it (never holds). */
  | { gate: 'rejection'; allowed: true; overrides: { by: string; reason: string; at: number } };

export type Outcome<D = unknown> =
  | { kind: 'done'; summary: string }
  /** Not allowed (permissions, or the same person approving twice). */
  | { kind: 'denied'; reason: string }
  /** Allowed, but the object is not in the state the action needs; `details` say what instead. */
  | { kind: 'refused'; reason: string; details: D }
  /** Something went wrong (the cluster, the network): the unexpected. */
  | { kind: 'failed'; reason: string; error: unknown }
  | { kind: 'first-approval'; summary: string };
