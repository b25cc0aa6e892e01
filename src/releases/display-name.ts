/**
 * What people call a release, wherever it is shown (the thread's parent, `status`, the App Home):
 * the id CI announced (also for a Freight's release it joined), else, for a release that is a
 * Freight, the Freight's display name (src/model/kargo-freight.ts) rather than `freight-<40 hex>`.
 * Plain text: escape it where it is shown.
 */
import { freightDisplayName } from '../model/kargo-freight.js';
import type { ReleaseRecord } from './record.js';
import { FREIGHT_RELEASE_PREFIX } from './route-kargo.js';

export function releaseDisplayName(record: Pick<ReleaseRecord, 'announcedAs' | 'idSource' | 'releaseId' | 'stages'>): string {
  if (record.announcedAs) return record.announcedAs;
  if (record.idSource === 'freight') {
    const name = record.releaseId.slice(FREIGHT_RELEASE_PREFIX.length);
    const freight = record.stages.flatMap((s) => Object.values(s.targets)).find((t) => t.kargo?.freight?.name === name && t.kargo.freight.alias)?.kargo?.freight;
    return freightDisplayName({ name, ...(freight?.alias ? { alias: freight.alias } : {}) });
  }
  return record.releaseId;
}
