/**
 * Pipeline templates (`pipelineTemplates:`): one entry generates one pipeline per group of
 * objects a generator lists (issue 22). The template's name, release id annotation and stages
 * are text with placeholders, filled from the group: `{{value}}` (the group label's value),
 * `{{namespace}}`, `{{cluster}}`, `{{label:KEY}}` and `{{annotation:KEY}}` (of the group's first
 * object). Checked at load by filling them with sample values and parsing the result as a
 * pipeline, so a bad template fails start-up with the path of what is wrong, as a pipeline does.
 */
import { z } from 'zod';
import type { CompiledLabelSelector } from '../model/label-selector.js';

/** What a group gives its placeholders. */
export interface TemplateBindings {
  value: string;
  namespace: string;
  cluster: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const KNOWN = /^(value|namespace|cluster|(label|annotation):[A-Za-z0-9][-A-Za-z0-9_./]{0,252})$/;

/** Placeholders in `text` that are not one of the known forms. */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '').filter((p) => !KNOWN.test(p));
}

/** `text` with each placeholder replaced; a label or annotation the object lacks fills as "". */
export function fillText(text: string, b: TemplateBindings): string {
  return text.replace(PLACEHOLDER, (_all, p: string) => {
    if (p === 'value') return b.value;
    if (p === 'namespace') return b.namespace;
    if (p === 'cluster') return b.cluster;
    const colon = p.indexOf(':');
    const key = p.slice(colon + 1);
    return (p.startsWith('label:') ? b.labels[key] : b.annotations[key]) ?? '';
  });
}

/** A YAML value (the stages) with every string in it filled. */
export function fillDeep(value: unknown, b: TemplateBindings): unknown {
  if (typeof value === 'string') return fillText(value, b);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, b));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, b)]));
  return value;
}

/** Paths (relative to `value`) of strings holding an unknown placeholder, with the placeholders. */
function badPlaceholders(value: unknown, path: PropertyKey[] = []): { path: PropertyKey[]; names: string[] }[] {
  if (typeof value === 'string') {
    const names = unknownPlaceholders(value);
    return names.length > 0 ? [{ path, names }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => badPlaceholders(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => badPlaceholders(v, [...path, k]));
  return [];
}

/** Sample values the load-time check fills placeholders with: valid names, so what fails is the template's own text. */
export function sampleBindings(cluster: string): TemplateBindings {
  const labels = new Proxy({}, { get: () => 'sample' }) as Record<string, string>;
  return { value: 'sample', namespace: 'sample', cluster, labels, annotations: labels };
}

/** file.ts' own rules, handed in (file.ts imports this module, so this one cannot import it). */
export interface TemplateParts {
  labelSelector: z.ZodType<CompiledLabelSelector, unknown>;
  name: (what: string) => z.ZodType<string, string>;
  channel: z.ZodType<string, string>;
}

const labelKey = z.string().min(1).max(253).regex(/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, 'must be a label key such as app.kubernetes.io/name');

/** The template's schema, built from file.ts' own parts (its selector, name and channel rules). */
export function pipelineTemplateSchema(parts: TemplateParts) {
  const { labelSelector, name, channel } = parts;
  const generator = z
    .object({
      /** The clusters whose objects are listed (watched ones through the watch, others from their webhooks' objects). */
      clusters: z.array(name('cluster name')).min(1),
      rollouts: z.object({ namespaces: z.array(name('namespace')).min(1), selector: labelSelector }).strict().optional(),
      applications: z.object({ namespaces: z.array(name('namespace')).min(1).default(['argocd']), selector: labelSelector }).strict().optional(),
      /** One pipeline per value of this label; objects without it belong to no group. */
      groupBy: z.object({ label: labelKey }).strict(),
    })
    .strict()
    .refine((g) => g.rollouts !== undefined || g.applications !== undefined, { message: 'a generator lists rollouts, applications or both' });
  return z
    .object({
      name: z.string().min(1).max(200),
      /** The default channel; an object of the group may name its own with `channelAnnotation`. */
      channel,
      channelAnnotation: labelKey.default('glidepath.io/channel'),
      releaseIdAnnotation: z.string().min(1).max(253).default('hangar.io/release-id'),
      stallAfterMinutes: z.number().positive().optional(),
      /** The generated pipeline's owners (see the pipeline's `owners`); by default the group's `glidepath.io/owners` annotation. */
      owners: z.array(z.string().min(1).max(300)).max(20).default(['{{annotation:glidepath.io/owners}}']),
      /** As the pipeline's `charts`: `false`, no release timeline image in the generated pipelines' threads. */
      charts: z.boolean().optional(),
      generator,
      /** Stages as a pipeline's, with placeholders: checked at load by filling them with sample values. */
      stages: z.array(z.record(z.string(), z.unknown())).min(1),
    })
    .strict()
    .superRefine((t, ctx) => {
      for (const [field, value] of [['name', t.name], ['releaseIdAnnotation', t.releaseIdAnnotation], ['owners', t.owners], ['stages', t.stages]] as const) {
        for (const bad of badPlaceholders(value)) {
          ctx.addIssue({ code: 'custom', path: [field, ...bad.path], message: `unknown placeholder ${bad.names.map((n) => `{{${n}}}`).join(', ')} (known: {{value}}, {{namespace}}, {{cluster}}, {{label:KEY}}, {{annotation:KEY}})` });
        }
      }
    });
}
