/**
 * Rejections (issue #23 item 4): a person holds a step with a reason. Kept in Redis per rejected
 * state (an approval's `expected`: the object at its generation, pod hash and step; an
 * ApplicationSet step at its revision; a promotion to a Kargo Stage), with a TTL, so a restart
 * still knows it. A rejection changes nothing in the cluster: the pause stays, the step is not
 * synced, nothing is promoted. An approval of the same state afterwards goes through and says it
 * overrides the rejection, by whom and why. Each change is also fed to the reducer as a fact, so
 * the release record (and its parent message) says who holds the step.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Fact } from '../facts/fact.js';
import { untrusted } from '../text/mrkdwn.js';
import type { Keys } from '../store/keys.js';
import type { ClusterAction } from '../policy/permissions.js';

/** The longest reason kept: a rejection is a sentence for the team, not a document. */
export const REJECTION_REASON_LIMIT = 500;

const rejectionSchema = z.object({
  by: z.string(),
  reason: z.string(),
  at: z.number(),
  what: z.string(),
  /** Where the rejection shows (the release record), when it concerns a known release. */
  pipeline: z.string(),
  stage: z.string(),
  releaseId: z.string().optional(),
});
export type Rejection = z.infer<typeof rejectionSchema>;

/** What a reason must be; undefined when it is fine. A refusal a person can act on. */
export function reasonProblem(reason: string): string | undefined {
  if (reason.trim() === '') return 'a rejection needs a reason: say why the step should not go on';
  if (reason.length > REJECTION_REASON_LIMIT) return `the reason is ${reason.length} characters; keep it to ${REJECTION_REASON_LIMIT} (link to details instead)`;
  return undefined;
}

/** A reason as Slack shows it: escaped (a reason that says `<!channel>` pings nobody), one line, bounded. */
export function quotedReason(reason: string): string {
  return `“${untrusted(reason, REJECTION_REASON_LIMIT + 100, { oneLine: true })}”`;
}

/** What an approval over a rejection adds to its summary: whose rejection it overrides, and their reason. */
export function overrideNote(overrides: { by: string; reason: string }): string {
  return `; this overrides the rejection by <@${overrides.by}>: ${quotedReason(overrides.reason)}`;
}

/** What of an intent (types.ts `Intent`) a rejection reads; named here so types.ts alone imports this file, not both ways. */
export interface RejectableIntent {
  action: ClusterAction;
  target: string;
  expected?: string | undefined;
}

/**
 * The state a rejection of `intent` holds, and an approval of it overrides: the Kargo Stage for a
 * promote (a rejection holds every promotion to it, whichever Freight a promote names: the quorum
 * ties a promote's approvals to its Freight, a rejection is of the Stage), else the approval's own
 * `expected` state.
 */
export function rejectedState(intent: RejectableIntent): string | undefined {
  if (intent.action === 'promote') return `${intent.target}@promote`;
  return intent.expected;
}

export class Rejections {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    /** Where the record hears of rejections (the facts queue); none: Redis only. */
    private readonly facts: { add(fact: Fact): Promise<unknown> } | undefined,
    private readonly now: () => number = Date.now,
    /** A held step nobody returns to is forgotten after a week, as Glidepath's own actions are. */
    private readonly ttlMs = 7 * 86_400_000,
  ) {}

  async reject(state: string, rejection: Omit<Rejection, 'at'>): Promise<Rejection> {
    const stored: Rejection = { ...rejection, at: this.now() };
    await this.redis.set(this.keys.rejection(state), JSON.stringify(stored), 'PX', this.ttlMs);
    await this.tellRecord(stored);
    return stored;
  }

  /** The rejection standing for `state`, if any (an unreadable one is treated as none: it cannot name a person). */
  async standing(state: string): Promise<Rejection | undefined> {
    const raw = await this.redis.get(this.keys.rejection(state));
    if (raw === null) return undefined;
    try {
      const parsed = rejectionSchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** An approval went through over the rejection: it no longer stands, and the record says who overrode it. */
  async overridden(state: string, rejection: Rejection, by: string): Promise<void> {
    await this.redis.del(this.keys.rejection(state));
    await this.tellRecord(rejection, by);
  }

  private async tellRecord(r: Rejection, overriddenBy?: string): Promise<void> {
    if (!this.facts || r.releaseId === undefined) return;
    await this.facts.add({
      kind: 'rejection',
      source: 'internal',
      receivedAt: this.now(),
      pipeline: r.pipeline,
      releaseId: r.releaseId,
      stage: r.stage,
      what: r.what,
      by: r.by,
      reason: r.reason,
      ...(overriddenBy !== undefined ? { overriddenBy } : {}),
    });
  }
}
