/**
 * Which upstream Kargo Stage's Freight moves on to a stage: the Freight a Promote button is shown
 * for (src/releases/worker/promote-freight.ts) and the one its click promotes (commands/promote.ts).
 */
import type { StageConfig } from '../config/file.js';

/** The upstream Kargo Stage whose Freight moves on to `to`, when both are in one project of one cluster. */
export function upstreamKargoStage(from: StageConfig | undefined, to: StageConfig | undefined): { cluster: string; project: string; stage: string } | undefined {
  // Only a stage that names one Kargo Stage exactly has one Freight to hand on.
  const stage = from?.kargo?.selection.name?.exactName;
  if (!from?.kargo || !stage || from.kargo.selector || !to?.kargo || from.cluster !== to.cluster || from.kargo.project !== to.kargo.project) return undefined;
  return { cluster: from.cluster, project: from.kargo.project, stage };
}
