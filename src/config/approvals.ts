/**
 * A stage's quorum (docs/actions.md, the approvals gate): how many different people must approve
 * the same state of the stage before the approval is sent, who counts, and whether the release's
 * author and merger (from the CI announcement) are left out. Built with the config's own Slack id
 * check, so the file and this block refuse the same ids in the same words.
 */
import { z } from 'zod';

export function approvalsSchema(slackPrincipal: z.ZodType<string>) {
  return z
    .object({
      required: z.number().int().min(1).max(20),
      /** Slack users (U…/W…) or user groups (S…) whose approvals count; unset: whoever may approve. */
      from: z.array(slackPrincipal).min(1, 'list at least one Slack user or group id, or leave from out (whoever may approve counts)').max(100).optional(),
      distinct: z.literal(true, { error: 'the same person never counts twice: distinct may only be true (or left out)' }).default(true),
      /** The CI announcement's authorSlackId and mergedBySlackId never count. */
      excludeAuthor: z.boolean().default(true),
    })
    .strict();
}

export type ApprovalsConfig = z.infer<ReturnType<typeof approvalsSchema>>;
