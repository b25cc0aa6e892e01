/**
 * Which Kargo Stages a pipeline stage means, in Kargo's own `stageSelector` grammar (as
 * `ProjectConfig.spec.promotionPolicies[].stageSelector` reads it, akuity/kargo `pkg/pattern`): a
 * name that is exact, `glob:<pattern>` or `regex:<pattern>` (`regexp:` too), ANDed with a label
 * selector. The pattern languages are in kargo-name-pattern.ts. Stages come and go, so
 * a pipeline names them by pattern or label and never by a fixed list. Kargo's docs warn that
 * patterns match more than meant: whatever acts on a selection shows the matched list first.
 *
 * Compiled once, at config load, like label selectors.
 */
import type { CompiledLabelSelector } from './label-selector.js';
import { doublestarToRegExp, NamePatternError, re2ToRegExp } from './kargo-name-pattern.js';
import { isDns1123Subdomain } from './kube-names.js';

export class StageSelectorError extends Error {
  override readonly name = 'StageSelectorError';
}

export interface CompiledStageName {
  /** As written in the config (`prod`, `glob:prod-*`, `regex:^prod-`, `regexp:^prod-`). */
  readonly text: string;
  readonly kind: 'exact' | 'glob' | 'regex';
  /** The one Stage an exact name means. */
  readonly exactName?: string;
  matches(name: string): boolean;
  /** Its text: a config written back out (the sandbox's config.yaml) says what was written in. */
  toJSON(): string;
}

/** How to write a Stage choice, for every message that refuses one. */
export const STAGE_GRAMMAR_HINT =
  'write an exact Stage name (prod-eu), glob:<pattern> (glob:prod-*, glob:prod-{eu,us}; the whole name must match) or regex:<RE2> (regex:^prod-; matches anywhere unless anchored)';

const PREFIXES = [
  { prefix: 'glob:', kind: 'glob' },
  { prefix: 'regex:', kind: 'regex' },
  { prefix: 'regexp:', kind: 'regex' },
] as const;

/**
 * A Stage name as Kargo's `ParseNamePattern` reads it: `glob:…`, `regex:…` or `regexp:…`, else an
 * exact name. A name with another `xxx:` prefix is refused, as Kargo's ProjectConfig webhook does.
 */
export function compileStageName(text: string): CompiledStageName {
  for (const { prefix, kind } of PREFIXES) {
    if (!text.startsWith(prefix)) continue;
    const pattern = text.slice(prefix.length);
    // Kargo takes both, but "" as a glob matches no Stage and "" as a regex matches every one: neither is what a person means.
    if (pattern.length === 0) {
      throw new StageSelectorError(kind === 'glob' ? `"${text}": the glob after "${prefix}" is empty, so it would match no Stage` : `"${text}": the pattern after "${prefix}" is empty, so it would match every Stage; write ${prefix}.* if that is meant`);
    }
    let re: RegExp;
    try {
      re = kind === 'glob' ? doublestarToRegExp(pattern) : re2ToRegExp(pattern);
    } catch (err) {
      throw new StageSelectorError(`"${text}": ${err instanceof NamePatternError ? err.message : `not a valid ${kind} (${(err as Error).message})`}`);
    }
    return { text, kind, matches: (name) => re.test(name), toJSON: () => text };
  }
  const colon = text.indexOf(':');
  if (colon > 0) throw new StageSelectorError(`"${text}": "${text.slice(0, colon)}:" is not a pattern Kargo knows; ${STAGE_GRAMMAR_HINT}`);
  if (!isDns1123Subdomain(text)) throw new StageSelectorError(`"${text}" is not a Stage name (lowercase letters, digits, "-" and ".", at most 253); ${STAGE_GRAMMAR_HINT}`);
  return { text, kind: 'exact', exactName: text, matches: (name) => name === text, toJSON: () => text };
}

export interface KargoStageSelection {
  project: string;
  /** Compiled name pattern (exact, glob: or regex:). */
  name?: CompiledStageName;
  labels?: CompiledLabelSelector;
}

/** One line for people: `stage glob:prod-* with labels tier=prod in project kargo-checkout`. */
export function describeSelection(selection: KargoStageSelection): string {
  const parts = [selection.name ? `stage ${selection.name.text}` : 'stages', selection.labels ? `with labels ${selection.labels.text}` : undefined, `in project ${selection.project}`];
  return parts.filter(Boolean).join(' ');
}

/** Whether the Stage `namespace/name` with these labels is one the selection means (name and labels ANDed). */
export function selectsKargoStage(selection: KargoStageSelection, stage: { namespace: string; name: string; labels?: Readonly<Record<string, string>> }): boolean {
  if (stage.namespace !== selection.project) return false;
  if (selection.name && !selection.name.matches(stage.name)) return false;
  if (selection.labels && !selection.labels.matches(stage.labels ?? {})) return false;
  return true;
}
