/** Words of the Kargo replies (pure): a Promotion that failed, errored or was aborted, and a failed verification. Cluster text escaped and bounded. */
import type { ReplyDetail } from '../../releases/record.js';
import { code, untrusted } from './mrkdwn.js';

const MESSAGE_LIMIT = 2500;

function quoted(message: string | undefined): string {
  const text = untrusted(message, MESSAGE_LIMIT);
  return text ? `\n>${text.replace(/\n/g, '\n>')}` : '';
}

/** `at` is the reply's place, already rendered (`*staging* — \`prod/kargo-checkout/staging\``). */
export function kargoReplyBody(kind: 'promotion-failed' | 'verification-failed', d: ReplyDetail, at: string): string {
  if (kind === 'promotion-failed') {
    const phase = untrusted(d.phase ?? 'Failed', 20, { oneLine: true });
    const promotion = d.promotion ? ` ${code(d.promotion, 253)}` : '';
    const step = d.step ? ` at step ${code(d.step, 120)}` : '';
    const by = d.actor ? ` (requested by ${code(d.actor, 120)})` : '';
    const verb = phase === 'Aborted' ? 'was aborted' : phase === 'Errored' ? 'errored' : 'failed';
    return `:x: ${at}: the Kargo Promotion${promotion} ${verb}${step}${by}.${quoted(d.message)}`;
  }
  const phase = untrusted(d.phase ?? 'Failed', 20, { oneLine: true });
  const run = d.analysisRun ? ` (AnalysisRun ${code(d.analysisRun, 253)})` : '';
  return `:x: ${at}: the verification of the Freight ended ${phase}${run}; the Freight does not move on from here.${quoted(d.message)}`;
}
