/** Image references, compared by repository so a release of several services can be checked for drift. */

export interface ImageRef {
  repository: string;
  /** Tag and/or digest, e.g. `1.29.0` or `sha256:…`. */
  version: string;
}

export function parseImageRef(ref: string): ImageRef {
  const at = ref.indexOf('@');
  if (at !== -1) return { repository: ref.slice(0, at), version: ref.slice(at + 1) };
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > slash) return { repository: ref.slice(0, colon), version: ref.slice(colon + 1) };
  return { repository: ref, version: 'latest' };
}

export interface ImageDrift {
  repository: string;
  expected: string;
  observed: string;
}

/**
 * Each list's images by repository, made once per list: a release's images are checked against
 * every Rollout fact it hears (25 services: 50 parses per fact, 4% of the workers' CPU under
 * bench:ingest), and a list is replaced, never changed in place, when a repository joins.
 */
const byRepositoryOf = new WeakMap<readonly string[], ReadonlyMap<string, string>>();

function byRepository(images: readonly string[]): ReadonlyMap<string, string> {
  let map = byRepositoryOf.get(images);
  if (map === undefined) byRepositoryOf.set(images, (map = new Map(images.map((e) => [parseImageRef(e).repository, e]))));
  return map;
}

/** Images observed whose repository the release knows but whose tag or digest differs. */
export function imageDrift(expected: readonly string[], observed: readonly string[]): ImageDrift[] {
  const known = byRepository(expected);
  const drift: ImageDrift[] = [];
  for (const o of observed) {
    const { repository } = parseImageRef(o);
    const image = known.get(repository);
    if (image !== undefined && image !== o) drift.push({ repository, expected: image, observed: o });
  }
  return drift;
}

/** Adds images of repositories the release did not know yet (a service seen for the first time): `expected` itself when none is new. */
export function withNewRepositories(expected: string[], observed: readonly string[]): string[] {
  const known = byRepository(expected);
  const added = observed.filter((o) => !known.has(parseImageRef(o).repository));
  return added.length === 0 ? expected : [...expected, ...added].sort();
}
