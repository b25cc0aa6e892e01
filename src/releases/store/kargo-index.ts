/**
 * Redis reads and writes behind Kargo routing: which release CI announced for a set of images
 * (written by ingest when an announcement is accepted, read by the worker for a Freight that
 * carries those images), and which release of a pipeline is in flight (for a Kargo Stage that has
 * no Freight yet: the pipeline's newest release). Bounded: each announced-images key expires with the longest a release lives.
 * Images whose Freight opened a `freight-` release before any announcement stay with that release
 * (`freightImages`): a later announcement of them joins it (src/releases/worker/kargo-announce.ts).
 */
import type { Redis } from 'ioredis';
import { targetKey } from '../../facts/fact.js';
import type { Fact } from '../../facts/fact.js';
import type { KargoFact, KargoStageFact } from '../../facts/kargo-fact.js';
import type { Keys } from '../../store/keys.js';
import { freightImageDigests, freightOfFact, imagesDigest, type KargoRouteHints } from '../../routing/kargo-route-hints.js';
import type { Route } from '../../routing/route-types.js';
import type { ReleaseStore } from './store.js';
import { unplacedEntry } from './kargo-tombstones.js';
import type { TargetIndex } from './target-index.js';

/* KEYS[1] announced images, KEYS[2] the Freight release of the same images; ARGV[1] release id, ARGV[2] TTL ms. */
const RECORD_UNLESS_FREIGHT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

export class AnnouncedImages {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly ttlMs: number,
  ) {}

  /** Records that CI announced `releaseId` of `pipeline` with exactly `images`, unless a Freight's release has them already (the announcement joins that one). */
  async record(pipeline: string, images: readonly string[], releaseId: string): Promise<void> {
    if (images.length === 0) return;
    const digest = imagesDigest(images);
    await this.redis.eval(RECORD_UNLESS_FREIGHT, 2, this.keys.announcedImages(pipeline, digest), this.keys.freightImages(pipeline, digest), releaseId, String(Math.round(this.ttlMs)));
  }

  /** Points these images at `releaseId` (the Freight's release that an announcement of them joined). */
  async point(pipeline: string, images: readonly string[], releaseId: string): Promise<void> {
    if (images.length === 0) return;
    await this.redis.set(this.keys.announcedImages(pipeline, imagesDigest(images)), releaseId, 'PX', Math.round(this.ttlMs));
  }

  /** A `freight-` release was opened by one of `facts` (no announcement of its images then): its images, in every form, stay with it. */
  async noteFreightRelease(pipeline: string, facts: readonly Fact[], releaseId: string): Promise<void> {
    const fact = facts.find((f): f is KargoFact => (f.kind === 'kargo-stage' || f.kind === 'kargo-promotion' || f.kind === 'kargo-freight') && freightOfFact(f) !== undefined);
    const freight = fact ? freightOfFact(fact) : undefined;
    if (!freight) return;
    const tx = this.redis.multi();
    for (const digest of freightImageDigests(freight)) tx.set(this.keys.freightImages(pipeline, digest), releaseId, 'PX', Math.round(this.ttlMs), 'NX');
    await tx.exec();
  }

  /** The `freight-` release opened for a Freight with exactly these images, if one was. */
  async freightRelease(pipeline: string, images: readonly string[]): Promise<string | undefined> {
    if (images.length === 0) return undefined;
    return (await this.redis.get(this.keys.freightImages(pipeline, imagesDigest(images)))) ?? undefined;
  }

  /** The release CI announced for any of these image digests, if one was. */
  async lookup(pipeline: string, digests: readonly string[]): Promise<string | undefined> {
    if (digests.length === 0) return undefined;
    const found = await this.redis.mget(...digests.map((d) => this.keys.announcedImages(pipeline, d)));
    return found.find((v): v is string => typeof v === 'string' && v.length > 0);
  }
}

/** Reads the hints a Kargo fact's routes need, one round trip per pipeline involved. */
export async function kargoRouteHints(fact: KargoFact, routes: readonly Route[], announced: AnnouncedImages, store: Pick<ReleaseStore, 'newestId'>): Promise<KargoRouteHints> {
  const hints: { announced: Record<string, string>; inFlight: Record<string, string> } = { announced: {}, inFlight: {} };
  const freight = freightOfFact(fact);
  const digests = freight ? freightImageDigests(freight) : [];
  for (const pipeline of new Set(routes.filter((r) => r.idSource === 'freight').map((r) => r.pipeline.name))) {
    const id = await announced.lookup(pipeline, digests);
    if (id) hints.announced[pipeline] = id;
  }
  for (const pipeline of new Set(routes.filter((r) => r.idSource === 'in-flight').map((r) => r.pipeline.name))) {
    // The newest release, finished or not: a Stage that joins after it completed un-completes it.
    const newest = await store.newestId(pipeline);
    if (newest) hints.inFlight[pipeline] = newest;
  }
  return hints;
}

/** A Stage no release can take yet is still known to its stage (or, when it left, buried), unless older than what the pipeline saw of it. */
export async function noteUnplacedStage(targets: Pick<TargetIndex, 'ownedOf' | 'recordMany'>, route: Pick<Route, 'pipeline' | 'stage'>, fact: KargoStageFact): Promise<void> {
  const key = targetKey(fact.target);
  const { kargo } = await targets.ownedOf(route.pipeline.name, [key]);
  const entry = unplacedEntry(fact, route.stage.name, kargo.get(key));
  if (entry) await targets.recordMany(route.pipeline.name, [[key, entry]]);
}
