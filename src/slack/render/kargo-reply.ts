/**
 * Words of the Kargo replies (pure): a Promotion or a target-aware Stage's PromotionRequest that
 * failed, errored or was aborted (named for what it is, with its phase; for a PromotionRequest the
 * failing Target and its child Promotion when one told), and a failed verification. Cluster text
 * escaped and bounded.
 */
import type { ReplyDetail } from '../../releases/record/record.js';
import { code, quoted, untrusted } from '../../text/mrkdwn.js';

const verbOf = (phase: string): string => (phase === 'Aborted' ? 'was aborted' : phase === 'Errored' ? 'errored' : 'failed');

/** `at` is the reply's place, already rendered (`*staging* — \`prod/kargo-checkout/staging\``). */
export function kargoReplyBody(kind: 'promotion-failed' | 'verification-failed', d: ReplyDetail, at: string): string {
  if (kind === 'promotion-failed') {
    const phase = untrusted(d.phase ?? 'Failed', 20, { oneLine: true });
    const what = d.via === 'PromotionRequest' ? 'PromotionRequest' : 'Promotion';
    const promotion = d.promotion ? ` ${code(d.promotion, 253)}` : '';
    const step = d.step ? ` at step ${code(d.step, 120)}` : '';
    const by = d.actor ? ` (requested by ${code(d.actor, 120)})` : '';
    const t = d.failedTarget;
    // A PromotionRequest ends Failed or Errored once every Target's child Promotion ended; the one that failed says where and why.
    const target = t ? `: Target ${code(t.name, 253)} (child Promotion ${code(t.promotion, 253)}) ${verbOf(untrusted(t.phase, 20, { oneLine: true }))}${step}` : step;
    return `:x: ${at}: the Kargo ${what}${promotion} ${verbOf(phase)}${what === 'PromotionRequest' ? ` (phase ${phase})` : ''}${target}${by}.${quoted(d.message)}`;
  }
  const phase = untrusted(d.phase ?? 'Failed', 20, { oneLine: true });
  const run = d.analysisRun ? ` (AnalysisRun ${code(d.analysisRun, 253)})` : '';
  return `:x: ${at}: the verification of the Freight ended ${phase}${run}; the Freight does not move on from here.${quoted(d.message)}`;
}
