/**
 * The reply for an ApplicationSet step that started out of order (derive-appset.ts): the step,
 * the earlier steps that were not Healthy at the release's revision, and each child involved with
 * what the ApplicationSet says of it and what the Application itself says. Escaped and bounded: the
 * detail names at most ten children per side (the rest are counted), each line is cut.
 */
import type { OutOfOrderDetail, OutOfOrderMember } from '../../releases/record/appset-record.js';
import { shortRevision } from '../../releases/record/revisions.js';
import { code, untrusted } from '../../text/mrkdwn.js';

function memberLine(m: OutOfOrderMember, revision: string | undefined): string {
  const targets = m.targets.length === 0 ? 'no revision' : m.targets.map((r) => code(shortRevision(r), 40)).join(', ');
  const own = revision !== undefined ? [revision] : (m.own ?? []);
  const aboutOwn = own.length === 0 || own.every((r) => m.targets.includes(r));
  const at = aboutOwn ? `targeting ${targets}` : `targeting ${targets}, not ${own.map((r) => code(shortRevision(r), 40)).join(', ')}`;
  const observed = m.observed ? `; the Application is ${untrusted(m.observed, 120, { oneLine: true })}` : '';
  return `• ${code(m.application, 120)} (step ${untrusted(m.step, 8, { oneLine: true })}): ${untrusted(m.status, 20, { oneLine: true })} ${at}${observed}`;
}

function more(n: number): string {
  return n > 0 ? `\n• and ${n} more` : '';
}

export function outOfOrderText(at: string, d: OutOfOrderDetail | undefined, message: string | undefined): string {
  if (!d) return `:x: ${at}: an ApplicationSet step started out of order.${message ? ` ${untrusted(message, 300, { oneLine: true })}` : ''}`;
  const steps = d.behindSteps.join(', ');
  const plural = d.behindSteps.length > 1;
  const where = d.revision !== undefined ? `at ${code(shortRevision(d.revision), 40)}` : "at each child's own revisions";
  return [
    `:x: ${at}: RollingSync step ${d.startedStep} of ${code(d.appSet, 300)} started before step${plural ? 's' : ''} ${steps} ${plural ? 'were' : 'was'} Healthy ${where}. ` +
      'The ApplicationSet controller may have judged the earlier step on a stale cache or on a health that lags the sync (argo-cd#22558); the release is not done until every step is Healthy at its revisions.',
    `*Not Healthy and Synced ${where}:*`,
    d.behind.map((m) => memberLine(m, d.revision)).join('\n') + more(d.moreBehind),
    `*Started (step ${d.startedStep}):*`,
    d.started.map((m) => memberLine(m, d.revision)).join('\n') + more(d.moreStarted),
  ].join('\n');
}
