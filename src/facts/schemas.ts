/**
 * The wire formats Glidepath accepts, checked with zod at the boundary: an envelope (`event`,
 * `sentAt`) around the object a notification carries, whose schema is the one model of that
 * object (src/model/). They follow what the real engines send (see deploy/notifications/ for the
 * templates we ship) and tolerate what older controllers and upstream fixtures contain: numbers
 * as strings, null blocks, unknown fields. Everything is bounded, since the sender is a cluster
 * we do not control.
 */
import { z } from 'zod';
import { applicationSchema } from '../model/application.js';
import { applicationSetSchema } from '../model/application-set.js';
// Every string here is an identifier or a token (the announcement's author is refused too: CI sees the 422 at once).
import { ident } from '../model/meta.js';
import { rolloutSchema } from '../model/rollout.js';

/** Unix seconds (our templates) or an RFC 3339 time. */
const sentAt = z
  .union([z.number(), ident(64)])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const ms = typeof v === 'number' ? v * 1000 : /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be unix seconds or an RFC 3339 time' });
      return z.NEVER;
    }
    return ms;
  });

const event = ident(200).regex(/^[\w.:-]*$/, 'must be a trigger name such as on-glidepath-rollout-paused').default('unknown');

/** What every notification body carries besides its object. */
export const factEnvelope = { event, sentAt };

export const rolloutFactBody = z.looseObject({ ...factEnvelope, rollout: rolloutSchema });
export type RolloutFactBody = z.infer<typeof rolloutFactBody>;

export const applicationFactBody = z.looseObject({ ...factEnvelope, application: applicationSchema });
export type ApplicationFactBody = z.infer<typeof applicationFactBody>;

/** The watch source's envelope around an ApplicationSet (no notification engine sends one). */
export const applicationSetFactBody = z.looseObject({ ...factEnvelope, applicationSet: applicationSetSchema });
export type ApplicationSetFactBody = z.infer<typeof applicationSetFactBody>;

export const releaseIdSchema = ident(200)
  .min(1, 'must not be empty')
  .regex(/^[\w.@/+:-]+$/, 'may hold letters, digits and . _ - @ / + : only');

const slackUserId = ident(32).regex(/^[UW][A-Z0-9]{2,}$/, 'must be a Slack user id such as U0123ABCD');

export const releaseAnnouncementBody = z
  .object({
    releaseId: releaseIdSchema,
    pipeline: ident(63).min(1),
    images: z.array(ident(1024).regex(/^[^\s]+$/, 'must be an image reference without spaces')).min(1).max(64),
    commit: ident(64).regex(/^[0-9a-f]{7,64}$/i, 'must be a git commit hash').optional(),
    pullRequestUrl: z.url({ protocol: /^https?$/ }).max(2048).optional(),
    author: ident(200).optional(),
    /** The Slack user who wrote the change and the one who merged it: their approvals do not count where a stage's approvals exclude the author. */
    authorSlackId: slackUserId.optional(),
    mergedBySlackId: slackUserId.optional(),
  })
  .strict();
export type ReleaseAnnouncementBody = z.infer<typeof releaseAnnouncementBody>;
