/**
 * The lines a stage row shows for its Kargo Stages (pure): per Stage, where it is and why (the
 * judgement: promoting, failed, not yet healthy, "healthy since promotion · now Progressing"), the
 * Freight (alias, and what it carries: image tags, commit), the Promotion's phase and who asked
 * for it, and the verification (Kargo's live health is in the judgement when it matters). Everything from the cluster escaped and bounded.
 */
import { imageTag } from '../../releases/record/display-name.js';
import type { TargetState } from '../../releases/record/record.js';
import { code, untrusted } from '../../text/mrkdwn.js';

const MAX_STAGES = 8;
const MAX_IMAGES = 2;

function freightText(t: TargetState): string | undefined {
  const f = t.kargo?.freight;
  if (!f) return undefined;
  const name = f.alias ? `*${untrusted(f.alias, 63, { oneLine: true })}*` : code(f.name.slice(0, 12), 20);
  const carries = f.images.slice(0, MAX_IMAGES).map((i) => code(imageTag(i), 120));
  if (f.images.length > MAX_IMAGES) carries.push(`${f.images.length - MAX_IMAGES} more`);
  const commit = f.commits.find((c) => c.id)?.id;
  if (commit) carries.push(`commit ${code(commit.slice(0, 7), 20)}`);
  return `Freight ${name}${carries.length > 0 ? ` (${carries.join(', ')})` : ''}`;
}

/** The Promotion (or PromotionRequest), its phase and who asked; only who asked when the judgement already says the rest. */
function promotionText(t: TargetState, why: string): string | undefined {
  const p = t.kargo?.promotion;
  if (!p) return undefined;
  const by = p.actor ? `by ${untrusted(p.actor, 80, { oneLine: true })}` : '';
  const what = `${p.via} ${untrusted(p.phase || 'Pending', 20, { oneLine: true })}`;
  if (why.startsWith(what)) return by ? `requested ${by}` : undefined;
  return by ? `${what} ${by}` : what;
}

function kargoLine(t: TargetState): string {
  const k = t.kargo!;
  const name = untrusted(`${t.ref.namespace}/${t.ref.name}`, 120, { oneLine: true });
  const what = t.aborted ? 'Aborted' : t.phase;
  const why = untrusted(t.message, 280, { oneLine: true });
  const parts = [freightText(t), promotionText(t, why)];
  if (k.verification && !why.includes('verification')) {
    const run = k.verification.analysisRun ? ` (${code(k.verification.analysisRun, 120)})` : '';
    parts.push(`verification ${untrusted(k.verification.phase, 20, { oneLine: true })}${run}`);
  }
  if (t.supersededBy !== undefined) parts.push(`moved on to ${code(t.supersededBy, 80)}`);
  return `• ${name} — ${what}${why ? `: ${why}` : ''}${parts.some(Boolean) ? ` · ${parts.filter(Boolean).join(' · ')}` : ''}`;
}

/** One line per Kargo Stage of the row, at most eight (then how many more). */
export function kargoTargetLines(targets: readonly TargetState[]): string[] {
  const kargo = targets.filter((t) => t.kargo !== undefined);
  const lines = kargo.slice(0, MAX_STAGES).map(kargoLine);
  if (kargo.length > MAX_STAGES) lines.push(`• and ${kargo.length - MAX_STAGES} more Kargo Stages`);
  return lines;
}
