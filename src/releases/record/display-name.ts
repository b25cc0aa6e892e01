/**
 * What people call a release, wherever it is shown (the thread's header, fallback text and
 * replies, `status`, the App Home): the id CI announced (also for a Freight's or a commit's release
 * it joined), else a Freight's display name (src/model/kargo-freight.ts) rather than
 * `freight-<40 hex>`, else for an Application or ApplicationSet release (keyed `revision-<sha>`)
 * the commit and the image tags its children run. Never the bare key: nobody in the channel knows
 * which change `revision-b5960f1d5315` is. Plain text: escape it where it is shown.
 */
import { freightDisplayName } from '../../model/kargo-freight.js';
import { cutCodePoints } from '../../model/unicode.js';
import type { ReleaseRecord } from './record.js';
import { FREIGHT_RELEASE_PREFIX, REVISION_RELEASE_PREFIX } from './release-ids.js';

const MAX_TAGS = 3;

type Named = Pick<ReleaseRecord, 'announcedAs' | 'idSource' | 'releaseId' | 'stages' | 'commit' | 'revision' | 'images'>;

/** `registry.example.com/shop/checkout:1.29.0` → `checkout:1.29.0`; a digest ref → `checkout@sha256:0123456`. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const [path, digest] = at === -1 ? [image, undefined] : [image.slice(0, at), image.slice(at + 1)];
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (digest !== undefined) return `${last}@${digest.slice(0, digest.indexOf(':') + 8)}`;
  return last;
}

/** The image tags the release's targets run (Argo CD's summary of each child), else what CI announced. */
function tagsOf(record: Named): string[] {
  const running = record.stages.flatMap((s) => Object.values(s.targets)).flatMap((t) => t.images);
  return [...new Set((running.length > 0 ? running : record.images).map((i) => cutCodePoints(imageTag(i), 80)))].sort();
}

function revisionName(record: Named): string {
  const sha = record.commit ?? record.revision ?? record.releaseId.slice(REVISION_RELEASE_PREFIX.length);
  const tags = tagsOf(record);
  const shown = tags.slice(0, MAX_TAGS).join(', ');
  const more = tags.length > MAX_TAGS ? ` and ${tags.length - MAX_TAGS} more` : '';
  return `commit ${cutCodePoints(sha, 7)}${tags.length > 0 ? ` (${shown}${more})` : ''}`;
}

/** Another release named by its id alone (a row's "moved on to"): a revision release by its short commit. */
export function releaseIdName(releaseId: string): string {
  return releaseId.startsWith(REVISION_RELEASE_PREFIX) ? `commit ${cutCodePoints(releaseId.slice(REVISION_RELEASE_PREFIX.length), 7)}` : releaseId;
}

export function releaseDisplayName(record: Named): string {
  if (record.announcedAs) return record.announcedAs;
  if (record.idSource === 'freight') {
    const name = record.releaseId.slice(FREIGHT_RELEASE_PREFIX.length);
    const freight = record.stages.flatMap((s) => Object.values(s.targets)).find((t) => t.kargo?.freight?.name === name && t.kargo.freight.alias)?.kargo?.freight;
    return freightDisplayName({ name, ...(freight?.alias ? { alias: freight.alias } : {}) });
  }
  if (record.releaseId.startsWith(REVISION_RELEASE_PREFIX)) return revisionName(record);
  return record.releaseId;
}
