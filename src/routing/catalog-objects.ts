/**
 * What the catalog compares of the objects it groups, pure: whether a fact is older than the
 * deletion the catalog saw, whether an object changed what fills its group's pipeline, and a
 * pipeline as data (to tell whether a refill changed it).
 */
import type { PipelineConfig } from '../config/file.js';
import type { TemplateBindings } from '../config/templates.js';
import type { GeneratedFrom } from './generator.js';

/**
 * A fact of a deleted object from before its deletion (queued, then routed after the watch saw it
 * go). The same object seen again with a newer version (relabelled back in) is not late.
 */
export function isLate(o: GeneratedFrom, tomb: { uid: string; resourceVersion?: string }): boolean {
  if (o.uid === undefined || o.uid !== tomb.uid) return false;
  if (o.resourceVersion === undefined || tomb.resourceVersion === undefined) return true;
  // resourceVersions are opaque, but the API server's are integers; otherwise only the same version is late.
  const numeric = /^\d{1,30}$/;
  if (numeric.test(o.resourceVersion) && numeric.test(tomb.resourceVersion)) return BigInt(o.resourceVersion) <= BigInt(tomb.resourceVersion);
  return o.resourceVersion === tomb.resourceVersion;
}

/** Bindings as data, to share: the object's labels and annotations copied. */
export function plainBindings(b: TemplateBindings): TemplateBindings {
  return { value: b.value, namespace: b.namespace, cluster: b.cluster, labels: { ...b.labels }, annotations: { ...b.annotations } };
}

export function sameObject(a: GeneratedFrom, b: GeneratedFrom): boolean {
  return a.uid === b.uid && sameRecord(a.labels, b.labels) && sameRecord(a.annotations, b.annotations);
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** A pipeline as data (its compiled selectors by their text), to tell whether a refill changed it. */
export function pipelineShape(p: PipelineConfig): unknown {
  return JSON.parse(JSON.stringify(p, (_k, v: unknown) => (v !== null && typeof v === 'object' && 'matches' in v && 'text' in v ? (v as { text: string }).text : v)));
}
