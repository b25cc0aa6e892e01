/**
 * Which Kargo Stages a promote means, as one KargoStageSelection: the configured stage's
 * (`kargo: { project, stage, selector }`), or the person's own choice (`--stage` in Kargo's
 * stageSelector grammar, `--selector` labels, ANDed; `--glob p` is `--stage glob:p`). Both go
 * through the same matcher, so what is confirmed is what Kargo itself would select.
 */
import { compileLabelSelector, LabelSelectorError } from '../src/model/label-selector.js';
import { compileStageName, STAGE_GRAMMAR_HINT, StageSelectorError, type KargoStageSelection } from '../src/model/kargo-stage-selector.js';
import type { PromoteConfirmValue } from '../src/slack/buttons.js';
import { UsageError } from './parse.js';

/** The one Stage a selection means without asking: an exact name and no labels. */
export function exactStage(selection: KargoStageSelection): string | undefined {
  return selection.labels ? undefined : selection.name?.exactName;
}

/** What the person typed instead of the configured Stage. */
export interface StageChoice {
  stage?: string;
  selector?: string;
}

function stageError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.includes(STAGE_GRAMMAR_HINT) ? message : `${message}; ${STAGE_GRAMMAR_HINT}`;
}

/** Compiles a choice; a pattern or selector that does not compile is a UsageError that says how to write it. */
export function choiceSelection(project: string, choice: StageChoice, subcommand: string): KargoStageSelection {
  let name;
  let labels;
  try {
    if (choice.stage !== undefined) name = compileStageName(choice.stage);
  } catch (err) {
    if (err instanceof StageSelectorError) throw new UsageError(stageError(err), subcommand);
    throw err;
  }
  try {
    if (choice.selector !== undefined) labels = compileLabelSelector(choice.selector);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw new UsageError(`--selector ${choice.selector}: ${err.message} (write labels as tier=prod,region in (eu,us))`, subcommand);
    throw err;
  }
  return { project, ...(name ? { name } : {}), ...(labels ? { labels } : {}) };
}

/** The choice as a confirm button carries it. */
export function choiceOfSelection(selection: KargoStageSelection): Partial<Pick<PromoteConfirmValue, 'stage' | 'sel'>> {
  return { ...(selection.name ? { stage: selection.name.text } : {}), ...(selection.labels ? { sel: selection.labels.text } : {}) };
}

/** The selection a confirm button names, made again at the click (`glob` from buttons posted before `stage`). */
export function selectionOfConfirm(value: PromoteConfirmValue): KargoStageSelection | { invalid: string } {
  const stage = value.stage ?? (value.glob !== undefined ? `glob:${value.glob}` : undefined);
  try {
    return choiceSelection(value.project, { ...(stage !== undefined ? { stage } : {}), ...(value.sel !== undefined ? { selector: value.sel } : {}) }, 'promote');
  } catch (err) {
    if (err instanceof UsageError) return { invalid: err.message };
    throw err;
  }
}
