/**
 * A Kargo Stage's removal holds against older observations of it. Facts come out of order and
 * repeated (the watch's DELETED and a relist race, a retried job, a lease handed over), so a Stage
 * fact observed before the Stage was deleted, or relabelled out of the selector, can arrive after
 * its removal; it must not make the Stage a target (or a pending one) again. The target index keeps,
 * per pipeline and Stage, the newest observation of it (`KargoSeen`: uid, generation,
 * resourceVersion), and after a removal that observation marked `removed`: a tombstone in place of
 * the Stage's entry, so it is bounded as every entry is (dropped when silent for as long as a
 * release lives; no more entries than Stages were heard).
 *
 * - A Stage fact counts against a tombstone only when newer: the same object (uid) at a higher
 *   generation or resourceVersion, or another object (a Stage re-created under the same name: a new
 *   uid, ordered by resourceVersion when both are etcd revisions, else counted).
 * - A removal counts unless it is older than the newest observation (relabelled out, then back in,
 *   delivered in reverse). A removal from a relist carries the last object seen: the same version.
 * - A Promotion counts against a tombstone only when its resourceVersion is newer (the API server's
 *   revisions are one sequence; a Promotion of a re-created Stage is newer than its deletion).
 *
 * Screening is per pipeline, before any release is reduced: the same judgement in every release a
 * fact goes to (the release of its Freight, the release in flight), and for a Stage no release holds.
 */
import { targetKey } from '../../facts/fact.js';
import type { KargoFact, KargoStageFact } from '../../facts/kargo-fact.js';
import { withKargoMembership } from '../../routing/kargo-route-hints.js';
import type { KargoSeen, TargetEntry } from './target-index.js';
import { compareObservations } from '../record/versions.js';

export function observationOf(fact: KargoStageFact): KargoSeen {
  const { uid, generation, resourceVersion } = fact.stage;
  return { ...(uid ? { uid } : {}), ...(generation !== undefined ? { generation } : {}), resourceVersion, ...(fact.removed ? { removed: true as const } : {}) };
}

/** < 0 when `next` is older than `prev`, 0 the same observation, > 0 newer (or not comparable). */
export function compareSeen(next: KargoSeen, prev: KargoSeen): number {
  const sameObject = next.uid === undefined || prev.uid === undefined || next.uid === prev.uid;
  // Generations of two objects of one name are not ordered; their resourceVersions are.
  if (sameObject) return compareObservations(next, prev);
  const byVersion = compareObservations({ resourceVersion: next.resourceVersion }, { resourceVersion: prev.resourceVersion });
  return byVersion === 0 ? 1 : byVersion;
}

/** Why the pipeline refuses this Kargo fact given what it has seen of its Stage, if it does. */
export function refusal(fact: KargoFact, seen: KargoSeen | undefined): string | undefined {
  if (!seen || fact.kind === 'kargo-freight') return undefined;
  if (fact.kind === 'kargo-promotion') {
    if (!seen.removed) return undefined;
    const order = compareObservations({ resourceVersion: fact.promotion.resourceVersion }, { resourceVersion: seen.resourceVersion });
    return order <= 0 ? `Promotion ${fact.promotion.name} is older than the removal of Kargo Stage ${fact.target.name}` : undefined;
  }
  const order = compareSeen(observationOf(fact), seen);
  if (fact.removed) return order < 0 ? `the removal of Kargo Stage ${fact.target.name} is older than an observation of it` : undefined;
  return seen.removed && order <= 0 ? `Kargo Stage ${fact.target.name} was removed after this observation (resourceVersion ${fact.stage.resourceVersion})` : undefined;
}

/** What the pipeline has seen of the Stage after `fact` counted (a removal is the newest; an older live observation changes nothing). */
export function afterFact(fact: KargoStageFact, seen: KargoSeen | undefined): KargoSeen | undefined {
  const next = observationOf(fact);
  return !seen || fact.removed || compareSeen(next, seen) > 0 ? next : undefined;
}

export interface KargoScreen {
  /** Per item: why it is refused (reduced as out of order), or undefined. */
  refused: (string | undefined)[];
  /** The stages' known targets as the batch sees them (a Stage that joined counts, one that left does not). */
  knownTargets: Record<string, string[]>;
  /** What the pipeline has seen of the batch's Stages after it (as read, with the batch's changes). */
  seen: Map<string, KargoSeen>;
}

/**
 * The batch's Kargo facts, in order, against what the pipeline has seen of their Stages (`seen`,
 * read from the target index for the batch's targets): which are refused, the stages' known
 * targets counting only the facts that count, and the Stages' newest observations after the batch.
 */
export function screenKargoBatch(
  items: readonly { fact: { kind: string }; route: { stage?: { name: string } }; key?: string }[],
  seen: ReadonlyMap<string, KargoSeen>,
  known: Readonly<Record<string, string[]>>,
): KargoScreen {
  const changed = new Map<string, KargoSeen>();
  const refused = items.map((item) => {
    const fact = item.fact as KargoFact;
    if ((fact.kind !== 'kargo-stage' && fact.kind !== 'kargo-promotion') || !item.route.stage) return undefined;
    const key = targetKey(fact.target);
    const current = changed.get(key) ?? seen.get(key);
    const why = refusal(fact, current);
    const next = !why && fact.kind === 'kargo-stage' ? afterFact(fact, current) : undefined;
    if (next) changed.set(key, next);
    return why;
  });
  const counted = items.filter((_, i) => refused[i] === undefined);
  return { refused, knownTargets: withKargoMembership(known, counted), seen: new Map([...seen, ...changed]) };
}

/** A Stage that no release can take yet (the pipeline has none): what the target index records of it, unless it is refused. */
export function unplacedEntry(fact: KargoStageFact, stage: string, seen: KargoSeen | undefined): TargetEntry | undefined {
  if (refusal(fact, seen)) return undefined;
  const next = afterFact(fact, seen) ?? seen;
  return { stage, releaseId: '', heardAt: fact.receivedAt, ...(next ? { kargo: next } : {}) };
}
