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

/** Images observed whose repository the release knows but whose tag or digest differs. */
export function imageDrift(expected: readonly string[], observed: readonly string[]): ImageDrift[] {
  const byRepository = new Map(expected.map((e) => [parseImageRef(e).repository, e]));
  const drift: ImageDrift[] = [];
  for (const o of observed) {
    const known = byRepository.get(parseImageRef(o).repository);
    if (known !== undefined && known !== o) drift.push({ repository: parseImageRef(o).repository, expected: known, observed: o });
  }
  return drift;
}

/** Adds images of repositories the release did not know yet (a service seen for the first time). */
export function withNewRepositories(expected: readonly string[], observed: readonly string[]): string[] {
  const repositories = new Set(expected.map((e) => parseImageRef(e).repository));
  const added = observed.filter((o) => !repositories.has(parseImageRef(o).repository));
  return added.length === 0 ? [...expected] : [...expected, ...added].sort();
}
