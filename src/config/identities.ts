/**
 * `identities:` in the config: who a Slack user is in Kubernetes, for clusters whose
 * `authorization` is `kubernetes` or `both` (docs/actions.md). An explicit table by Slack user
 * id, the Slack profile's email, or both (the table wins); Slack user groups add Kubernetes groups.
 */
import { z } from 'zod';

/**
 * A Kubernetes user or group name as it is sent in an Impersonate-* header: printable ASCII on
 * one line, and without Slack's control characters `<`, `>`, `&`, since refusals quote it.
 */
const kubeSubject = (what: string) =>
  z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x21-\x7e][\x20-\x7e]*$/, `${what} must be printable ASCII on one line (it is sent in an HTTP header)`)
    .refine((v) => !/[<>&]/.test(v), `${what} may not contain <, > or &`)
    .refine((v) => !v.startsWith('system:'), `${what} may not be a system: identity (Glidepath never impersonates the cluster's own accounts)`);

/** A record keyed by Slack ids, each bad key named by its path (zod's own record-key issue says only "Invalid key"). */
function bySlackId<T extends z.ZodType>(value: T, key: RegExp, what: string) {
  return z.record(z.string(), value).superRefine((record, ctx) => {
    for (const id of Object.keys(record)) if (!key.test(id)) ctx.addIssue({ code: 'custom', path: [id], message: `${JSON.stringify(id)} must be a ${what}` });
  });
}

export const identitiesSchema = z
  .object({
    /** Slack user id → Kubernetes user and groups. */
    users: bySlackId(z.object({ user: kubeSubject('user'), groups: z.array(kubeSubject('group')).default([]) }).strict(), /^[UW][A-Z0-9]{2,}$/, 'Slack user id (U…/W…)').default({}),
    /**
     * A Slack user not in `users` is the Kubernetes user named by their Slack profile's email
     * (users.info; the bot token needs users:read.email), looked up again after `cacheSeconds`.
     */
    byEmail: z
      .object({
        cacheSeconds: z.number().int().min(10).max(86_400).default(600),
        /** Kubernetes groups everyone mapped by email gets. */
        groups: z.array(kubeSubject('group')).default([]),
      })
      .strict()
      .optional(),
    /** Slack user group id → Kubernetes groups its members get, whichever way they were mapped. */
    slackGroups: bySlackId(z.array(kubeSubject('group')).min(1), /^S[A-Z0-9]{2,}$/, 'Slack user group id (S…)').default({}),
  })
  .strict();

export type IdentitiesConfig = z.infer<typeof identitiesSchema>;
