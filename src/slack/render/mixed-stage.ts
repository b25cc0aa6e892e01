/**
 * A stage that mixes apps (src/releases/reduce/mixed-stage.ts), in words: the thread's reply and the
 * line `/glidepath status` shows. Target names and release ids come from the cluster: every one
 * is escaped and bounded, and the lists are bounded by the record (ten named, the rest counted).
 */
import type { MixedGroup, OtherReleases } from '../../releases/record/record.js';
import { code, untrusted } from '../../text/mrkdwn.js';

function targetsText(group: MixedGroup): string {
  const named = group.targets.map((t) => code(t, 253)).join(', ');
  const more = group.count - group.targets.length;
  return more > 0 ? `${named} and ${more} more` : named;
}

/** `selector` with the app's label added: the stage of one app's own pipeline. */
function splitSelector(selector: string | undefined, label: string, value: string): string {
  const term = `${label}=${value}`;
  return selector && selector.trim() !== '' ? `${selector},${term}` : term;
}

/** Which targets run which release: one line per release, this one first. */
function releaseLines(mixed: OtherReleases, releaseId: string): string[] {
  const lines = [`• this release (${code(releaseId, 120)}) runs on ${targetsText(mixed.own)}`];
  for (const other of mixed.others) lines.push(`• ${code(other.releaseId, 120)} runs on ${targetsText(other)}`);
  const more = mixed.releaseCount - mixed.others.length;
  if (more > 0) lines.push(`• and ${more} more releases`);
  return lines;
}

/** How to split the stage: one pipeline per app, its selector adding the app's label (pipeline templates do not exist yet). */
export function splitAdvice(mixed: OtherReleases, selector: string | undefined): string {
  if (!mixed.split) {
    return (
      'Give each app’s targets a label of its own (for example `app.kubernetes.io/name`) and each app a pipeline ' +
      'whose stage selector adds that label; until then this stage mixes their releases.'
    );
  }
  const { label, value } = mixed.split;
  const values = [mixed.own.app, ...mixed.others.map((o) => o.app)].filter((v): v is string => v !== undefined);
  return (
    `To follow each app on its own, give it a pipeline whose stage selects ${code(splitSelector(selector, label, value), 300)} for this one ` +
    `(${code(label, 120)} seen: ${values.map((v) => code(v, 63)).join(', ')}).`
  );
}

/** The thread's reply: the stage mixes apps, this release does not wait for the others' targets, and how to split it. */
export function mixedStageText(at: string, mixed: (OtherReleases & { selector?: string }) | undefined, releaseId: string): string {
  if (!mixed) return `:warning: ${at} selects targets of other releases too.`;
  const selector = mixed.selector !== undefined ? ` (selector ${code(mixed.selector, 300)})` : '';
  return [
    `:warning: ${at}${selector} mixes apps: its targets run different releases at the same time. This release waits only for its own targets.`,
    ...releaseLines(mixed, releaseId),
    splitAdvice(mixed, mixed.selector),
  ].join('\n');
}

/** The line under a stage in `/glidepath status`. */
export function mixedStageStatusLine(stage: string, mixed: OtherReleases, selector: string | undefined): string {
  const others = mixed.others.map((o) => `${code(o.releaseId, 120)} on ${targetsText(o)}`).join('; ');
  const more = mixed.releaseCount - mixed.others.length;
  return `      :warning: ${untrusted(stage, 63, { oneLine: true })} mixes apps: also ${others}${more > 0 ? ` and ${more} more releases` : ''}. ${splitAdvice(mixed, selector)}`;
}
