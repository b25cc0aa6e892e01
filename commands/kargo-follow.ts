/**
 * Where a Kargo promotion is followed: one thread per release. On a cluster Glidepath watches
 * (`facts: watch | both`) the watch brings the Promotion, or a target-aware Stage's
 * PromotionRequest (from the Stage's status), to the release thread of its Freight
 * (docs/reducer.md "Kargo stages"), so the command follows nothing itself and its answer says
 * where to look. On a cluster heard only through webhooks nothing else would follow it (Kargo
 * sends no notifications), and promote.ts follows it as before.
 */
import type { Created as CreatedByPromote } from '../src/actions/intents.js';
import { freightDisplayName } from '../src/model/kargo-freight.js';
import { releaseDisplayName } from '../src/releases/record/display-name.js';
import type { ReleaseRecord } from '../src/releases/record/record.js';
import { FREIGHT_RELEASE_PREFIX } from '../src/releases/record/release-ids.js';
import { code, untrusted } from '../src/text/mrkdwn.js';
import type { CommandContext } from './types.js';

/** The watch source follows this cluster's Kargo objects. */
export function watchedCluster(ctx: Pick<CommandContext, 'config'>, cluster: string): boolean {
  const facts = ctx.config.clusters.find((c) => c.name === cluster)?.facts ?? 'webhook';
  return facts !== 'webhook';
}

/** A release key made from a Freight's name (src/releases: `freight-<name>`). */
const freightKey = (name: string): string => `${FREIGHT_RELEASE_PREFIX}${name}`;

/**
 * The release of `pipeline` that follows Freight `freight` (its name or alias), newest first: the
 * `freight-` release of it, or a release (keyed by a release id or CI's) whose Kargo Stages run it.
 */
export async function releaseOfFreight(ctx: Pick<CommandContext, 'releases'>, pipeline: string, freight: string): Promise<ReleaseRecord | undefined> {
  const records = await ctx.releases.list(pipeline, { includeFinished: true, limit: 20 });
  return records.find(
    (r) =>
      r.releaseId === freightKey(freight) ||
      r.stages.some((s) => Object.values(s.targets).some((t) => t.kargo?.freight && (t.kargo.freight.name === freight || t.kargo.freight.alias === freight))),
  );
}

/** What a promote created, as the answer names it. */
export type Created = Pick<CreatedByPromote, 'kind' | 'freight'>;

/**
 * The end of the answer on a watched cluster: where the promotion shows. The release thread of its
 * Freight when it exists ("this thread" when the click came from it), else the thread that opens
 * once the watch sees the promotion start. `found` is the Freight's release when the caller already
 * looked it up (promote of a named Freight); otherwise it is looked up here.
 */
export async function followedIn(ctx: Pick<CommandContext, 'releases' | 'threads' | 'clicked' | 'logger'>, pipeline: string, created: Created, found?: ReleaseRecord): Promise<string> {
  const name = created.freight.metadata.name;
  const label = untrusted(freightDisplayName({ name, alias: created.freight.alias }), 100, { oneLine: true });
  let where = '';
  try {
    const release = found ?? (await releaseOfFreight(ctx, pipeline, name));
    const thread = release ? await ctx.threads.get(pipeline, release.releaseId) : undefined;
    if (release && thread) {
      const here = ctx.clicked?.channel === thread.channel && ctx.clicked.threadTs === thread.ts;
      where = here ? ' (this thread)' : ` (release ${code(releaseDisplayName(release), 100)})`;
    } else {
      where = ` (it opens as the ${created.kind} starts)`;
    }
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message, pipeline, freight: name }, 'could not look up the release thread of a promoted Freight');
  }
  return `followed in the release thread of ${label}${where}`;
}
