/**
 * The worker's part of routing a Kargo fact, pure: a route keyed by a Freight's name goes to the
 * release CI announced for the same images instead (so the announcement and the Freight meet in
 * one thread), and a Stage without Freight joins the pipeline's release in flight (its newest
 * release, even a finished one: the thread is never Complete while a stage is not) as a target
 * still to start. The lookups these need are read by the worker (`kargoRouteHints` in
 * kargo-index.ts) and handed in, as the Application index is for Application facts.
 */
import { createHash } from 'node:crypto';
import type { KargoFact, KargoFreightRef } from '../facts/kargo-fact.js';
import type { ResolvedRoute, Route } from './route-types.js';

/** What the worker read for one Kargo fact: per pipeline, the announced release of its Freight's images, and the release in flight. */
export interface KargoRouteHints {
  announced?: Readonly<Record<string, string>>;
  inFlight?: Readonly<Record<string, string>>;
}

/** Digest of a set of image refs: the announcement index's key part. */
export function imagesDigest(images: readonly string[]): string {
  return createHash('sha256').update([...new Set(images)].sort().join('\n')).digest('hex').slice(0, 32);
}

/** The ways CI may have written the Freight's images: by tag, by digest, or both (`repo:tag@sha256:…`). */
export function freightImageDigests(freight: KargoFreightRef): string[] {
  const forms: string[][] = [];
  if (freight.images.length > 0) forms.push(freight.images);
  if (freight.digests.length > 0) {
    forms.push(freight.digests);
    if (freight.digests.length === freight.images.length && freight.images.every((i) => !i.includes('@'))) {
      const byRepo = new Map(freight.digests.map((d) => [d.slice(0, d.indexOf('@')), d.slice(d.indexOf('@'))]));
      forms.push(freight.images.map((i) => `${i}${byRepo.get(i.slice(0, i.lastIndexOf(':'))) ?? ''}`));
    }
  }
  return [...new Set(forms.map(imagesDigest))];
}

/** The Freight a Kargo fact is about, if any. */
export function freightOfFact(fact: KargoFact): KargoFreightRef | undefined {
  return fact.kind === 'kargo-stage' ? fact.stage.freight : fact.freight;
}

/** Routes with a release id of their own (drops `in-flight` ones, which only Kargo Stage facts make). */
export function placedRoutes(routes: readonly Route[]): ResolvedRoute[] {
  const out: ResolvedRoute[] = [];
  for (const r of routes) if (r.idSource !== 'in-flight') out.push({ ...r, idSource: r.idSource });
  return out;
}

/** Routes of a Kargo fact with the worker's lookups applied; `unplaced`: in-flight routes of pipelines with no release in flight. */
export function resolveKargoRoutes(routes: readonly Route[], hints: KargoRouteHints): { routes: ResolvedRoute[]; unplaced: Route[] } {
  const out: ResolvedRoute[] = [];
  const unplaced: Route[] = [];
  const seen = new Set<string>();
  const push = (route: ResolvedRoute): void => {
    const key = `${route.pipeline.name}\n${route.stage?.name ?? ''}\n${route.releaseId}`;
    if (!seen.has(key)) out.push(route);
    seen.add(key);
  };
  for (const r of routes) {
    const pipeline = r.pipeline.name;
    if (r.idSource === 'in-flight') {
      const id = hints.inFlight?.[pipeline];
      if (id) push({ pipeline: r.pipeline, stage: r.stage, releaseId: id });
      else unplaced.push(r);
    } else if (r.idSource === 'freight' && hints.announced?.[pipeline]) {
      push({ pipeline: r.pipeline, stage: r.stage, releaseId: hints.announced[pipeline], idSource: 'announcement' });
    } else {
      push({ ...r, idSource: r.idSource });
    }
  }
  return { routes: out, unplaced };
}

/** A Kargo Stage fact that says the Stage left the pipeline stage's selection. */
export function isKargoRemoval(fact: { kind: string; removed?: unknown }): boolean {
  return fact.kind === 'kargo-stage' && fact.removed !== undefined;
}

/**
 * The stages' known targets as a batch sees them: a Kargo Stage heard in the batch is one of its
 * stage's targets already (a Stage that just joined the selection is pending at once), and one
 * that left is not (it stops counting at once). The lists given are shared: changed copies only.
 */
export function withKargoMembership(
  known: Readonly<Record<string, string[]>>,
  items: readonly { fact: { kind: string; removed?: unknown; target?: unknown }; route: { stage?: { name: string } }; key?: string }[],
): Record<string, string[]> {
  let out: Record<string, string[]> | undefined;
  for (const item of items) {
    const stage = item.route.stage?.name;
    if (item.fact.kind !== 'kargo-stage' || !stage || !item.key) continue;
    const list = (out ?? known)[stage] ?? [];
    const has = list.includes(item.key);
    const removal = isKargoRemoval(item.fact);
    if (has === !removal) continue;
    out ??= { ...known };
    out[stage] = removal ? list.filter((k) => k !== item.key) : [...list, item.key];
  }
  return out ?? (known as Record<string, string[]>);
}
