/**
 * The stall reply's words (pure): the silence, what may really be wrong for the quiet stage's
 * source (src/releases/reduce/stall.ts), and what the release waits for a person to do besides.
 */
import type { ReplyDetail } from '../../releases/record/record.js';
import { code, untrusted } from '../../text/mrkdwn.js';

type Source = NonNullable<NonNullable<ReplyDetail['stall']>['source']>;

const CONTROLLER: Record<Source['follows'], string> = {
  rollouts: 'the Argo Rollouts controller',
  applications: "Argo CD's application controller",
  applicationSet: 'the ApplicationSet controller',
  kargo: "Kargo's controller",
};

const NOTIFICATIONS: Record<Exclude<Source['follows'], 'kargo'>, string> = {
  rollouts: 'the Rollouts notifications',
  applications: 'the Argo CD notifications',
  applicationSet: 'the Argo CD notifications of its Applications',
};

/** What may be wrong, for a stage heard the way `source` says (records from before it: the Rollouts notifications). */
export function stallCause(source: Source | undefined): string {
  if (!source) return 'the Rollouts notifications may have been lost';
  const cluster = code(untrusted(source.cluster, 63, { oneLine: true }));
  const controller = CONTROLLER[source.follows];
  if (source.follows === 'kargo' && source.facts === 'webhook') {
    return `Kargo sends no notifications and Glidepath does not watch cluster ${cluster} (\`facts: webhook\`), so nothing follows this Kargo stage: set \`facts: watch\` (or \`both\`) for ${cluster}`;
  }
  if (source.facts === 'webhook') return `${NOTIFICATIONS[source.follows as keyof typeof NOTIFICATIONS]} may have been lost`;
  if (source.facts === 'both' && source.follows !== 'kargo') {
    return `neither ${NOTIFICATIONS[source.follows]} nor Glidepath's watch of cluster ${cluster} said anything: the watch may be down and the notifications lost, or ${controller} is not reconciling`;
  }
  return `Glidepath's watch of cluster ${cluster} may be down (a working watch hears every object it follows at each relist), or ${controller} is not reconciling`;
}

/** The release waits for a person besides the silence: said, so the alert is not read as that wait. */
export function stallAwaiting(awaiting: NonNullable<ReplyDetail['stall']>['awaiting']): string {
  if (!awaiting) return '';
  const stage = `*${untrusted(awaiting.stage, 63, { oneLine: true })}*`;
  const what = awaiting.kind === 'approval' ? `${stage} is paused for approval` : `the next step is a promotion to ${stage}`;
  return ` The release also waits for a person (${what}); that wait is not what this alert is about.`;
}
