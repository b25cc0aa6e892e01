/**
 * How a revision is shown: a commit sha by its first seven characters, anything else (a Helm
 * chart version, a tag) as it is, cut at 20. One rule for rows, replies and reducer messages.
 */
export function shortRevision(revision: string | undefined): string {
  if (revision === undefined) return '?';
  return /^[0-9a-f]{12,}$/i.test(revision) ? revision.slice(0, 7) : revision.slice(0, 20);
}
