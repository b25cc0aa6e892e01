/**
 * Which Kargo Stages a pipeline stage means, in Kargo's own `stageSelector` grammar (as
 * `ProjectConfig.spec.promotionPolicies[].stageSelector` reads it): a name that is exact,
 * `glob:<pattern>` or `regex:<pattern>`, ANDed with a label selector. Stages come and go, so
 * a pipeline names them by pattern or label and never by a fixed list. Kargo's docs warn that
 * patterns match more than meant: whatever acts on a selection shows the matched list first.
 *
 * Compiled once, at config load, like label selectors.
 */
import type { CompiledLabelSelector } from './label-selector.js';

export class StageSelectorError extends Error {
  override readonly name = 'StageSelectorError';
}

export interface CompiledStageName {
  /** As written in the config (`prod`, `glob:prod-*`, `regex:^prod-`). */
  readonly text: string;
  readonly kind: 'exact' | 'glob' | 'regex';
  /** The one Stage an exact name means. */
  readonly exactName?: string;
  matches(name: string): boolean;
}

/** `prod-*`, `*-eu-?`: `*` any run of characters, `?` one character, everything else literal; the whole name must match. */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

export function compileStageName(text: string): CompiledStageName {
  if (text.startsWith('glob:')) {
    const pattern = text.slice('glob:'.length);
    if (pattern.length === 0) throw new StageSelectorError(`"${text}": the glob after "glob:" is empty`);
    const re = globToRegExp(pattern);
    return { text, kind: 'glob', matches: (name) => re.test(name) };
  }
  if (text.startsWith('regex:')) {
    const pattern = text.slice('regex:'.length);
    if (pattern.length === 0) throw new StageSelectorError(`"${text}": the pattern after "regex:" is empty`);
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (err) {
      throw new StageSelectorError(`"${text}": not a valid regular expression (${(err as Error).message})`);
    }
    // Go's regexp.MatchString, as Kargo uses it: a match anywhere in the name unless anchored.
    return { text, kind: 'regex', matches: (name) => re.test(name) };
  }
  return { text, kind: 'exact', exactName: text, matches: (name) => name === text };
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
