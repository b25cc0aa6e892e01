/**
 * A CI announcement and a Freight with the same images meet in one thread, in either order.
 * Announced first: ingest indexes the images (`announcedImages`) and the Freight's facts go to the
 * announced release (kargo-routing.ts). Freight first: the Freight's release is `freight-<name>`,
 * and when the worker opens it, it indexes the Freight's images (`freightImages`, every form: tag,
 * digest, both). A later announcement of exactly those images then goes to that release instead of
 * opening its own: the record keeps its id and says `announcedAs` (the thread's header shows the
 * CI's id), CI's id becomes an alias of it (`ReleaseStore.get` finds the release by either id: the
 * read API, `/glidepath status <release>`), and the images point at it for the Freight's later facts
 * (ingest does not take them back on a repeated announcement).
 *
 * An Application or ApplicationSet release (`revision-<sha>`, its children's revision) is joined the
 * same way by a later announcement whose commit is that revision, or, for an ApplicationSet rollout
 * (appset-rollouts.ts), the revision of any child routed to it: the thread is then named by CI's id.
 * Announced first: the commit is indexed (`announcedCommit`), and the rollout it opens is CI's release.
 *
 * What CI announced stays fixed as before: the claim on CI's release id (409 on other details) is
 * unchanged. A Freight's release joins one announcement: a second release id announcing the same
 * images opens a thread of its own, as one announced first would.
 */
import type { ReleaseAnnouncedFact } from '../../facts/fact.js';
import type { AnnouncedImages } from '../store/kargo-index.js';
import type { AppSetRollouts } from './appset-rollouts.js';
import { FREIGHT_RELEASE_PREFIX, REVISION_RELEASE_PREFIX } from '../record/release-ids.js';
import { revisionReleaseId } from '../../routing/route.js';
import type { ReleaseRecord } from '../record/record.js';
import type { ResolvedRoute } from '../../routing/route-types.js';
import type { ReleaseStore } from '../store/store.js';

/** The Freight's (or revision's) release an announcement joins, if it joins one. `own`: what CI's release id finds (its own release, or the one it joined before). */
export function joinedRelease(fact: ReleaseAnnouncedFact, freightRelease: ReleaseRecord | undefined, own: ReleaseRecord | undefined): string | undefined {
  if (own && own.releaseId === fact.releaseId) return undefined;
  const joinable = (id: string): boolean => id.startsWith(FREIGHT_RELEASE_PREFIX) || id.startsWith(REVISION_RELEASE_PREFIX);
  if (!freightRelease || !joinable(freightRelease.releaseId) || freightRelease.releaseId === fact.releaseId) return undefined;
  if (freightRelease.announcedAs !== undefined && freightRelease.announcedAs !== fact.releaseId) return undefined;
  return freightRelease.releaseId;
}

/** The announcement's route, to the Freight's release of the same images when one joins it (recording the alias and the images' new release). */
export async function announcementRoutes(
  fact: ReleaseAnnouncedFact,
  routes: readonly ResolvedRoute[],
  images: AnnouncedImages,
  store: Pick<ReleaseStore, 'get' | 'alias'>,
  rollouts?: Pick<AppSetRollouts, 'releaseOfCommit' | 'noteAnnounced'>,
): Promise<ResolvedRoute[]> {
  const out: ResolvedRoute[] = [];
  for (const route of routes) {
    const pipeline = route.pipeline.name;
    const byImages = await images.freightRelease(pipeline, fact.images);
    // A revision release is keyed by 12 characters of the commit: a shorter commit cannot name one.
    const commit = fact.commit && fact.commit.length >= 12 ? fact.commit.toLowerCase() : undefined;
    const byCommit = commit ? ((await rollouts?.releaseOfCommit(pipeline, commit)) ?? revisionReleaseId(commit)) : undefined;
    const candidate = byImages ?? byCommit;
    const into = candidate ? joinedRelease(fact, await store.get(pipeline, candidate), await store.get(pipeline, fact.releaseId)) : undefined;
    if (into) {
      await store.alias(pipeline, fact.releaseId, into);
      if (into === byImages) await images.point(pipeline, fact.images, into);
    } else if (commit) await rollouts?.noteAnnounced(pipeline, commit, fact.releaseId);
    out.push(into ? { ...route, releaseId: into } : route);
  }
  return out;
}
