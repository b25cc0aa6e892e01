/**
 * `abort <cluster/namespace/rollout>`: first a dialog naming exactly what will be aborted (cluster,
 * namespace, Rollout, current step and weight), then `status.abort=true` on the status subresource.
 * No undo is offered: Argo CD's selfHeal would put the abort back; the way back is a retry after
 * a fix, or a revert in git.
 */
import { deriveRolloutState } from '../src/model/rollout-state.js';
import { permissionGate } from '../src/actions/gates.js';
import { rolloutAbort } from '../src/actions/intents.js';
import { act, outcomeMessage, type Outcome } from './act.js';
import type { RolloutRef } from './approve.js';
import { ABORT_DIALOG_CALLBACK_ID, encodeAbortDialog, type AbortDialogMetadata } from '../src/slack/buttons.js';
import { confirmModal, section } from './blocks.js';
import { parseTarget, splitWords, UsageError } from './parse.js';
import { releaseWithTarget } from './releases.js';
import type { CommandContext, SlackText, Subcommand } from './types.js';
import { stageOfRollout } from './where.js';

const NAME = 'abort';

export function wayBack(ref: RolloutRef): string {
  return (
    `To go back: fix the cause and retry the Rollout (\`kubectl argo rollouts retry rollout ${ref.name} -n ${ref.namespace}\`, which writes status.abort=false), ` +
    'or revert the change in git. There is no undo here: with selfHeal on, Argo CD would put the aborted spec back anyway.'
  );
}

/** The abort itself, after the person confirmed; `podHash` is the version the dialog named. */
export async function abortConfirmed(ctx: CommandContext, meta: Pick<AbortDialogMetadata, 'c' | 'ns' | 'n' | 'h'>): Promise<{ outcome: Outcome; message: SlackText }> {
  const ref = { kind: 'object' as const, cluster: meta.c, namespace: meta.ns, name: meta.n };
  const { where } = await stageOfRollout(ctx, ref);
  const target = `${meta.c}/${meta.ns}/${meta.n}`;
  if (!where) return { outcome: { kind: 'denied', reason: 'no stage' }, message: { text: `:x: no configured stage selects ${target}` } };
  const known = await releaseWithTarget(ctx, where.pipeline.name, target);
  const intent = rolloutAbort(ctx, { cluster: meta.c, namespace: meta.ns, name: meta.n }, meta.h);
  const outcome = await act(ctx, { intent, where, ...(known ? { releaseId: known.record.releaseId } : {}) });
  const message = outcomeMessage(outcome);
  if (outcome.kind === 'done') {
    message.text += `\n${wayBack({ cluster: meta.c, namespace: meta.ns, name: meta.n })}`;
    const sync = known?.target.sync;
    if (sync?.phase === 'Running' && sync.runningHooks.length > 0) {
      // A revert cannot sync while the current operation waits on its hooks (notes: hook-pinned sync).
      const app = known?.target.application ?? 'its Application';
      message.text += `\n:pushpin: Argo CD's sync of ${app} is still Running with hooks (${sync.runningHooks.slice(0, 5).join(', ')}): a revert in git will not sync until they finish or the operation is terminated (\`argocd app terminate-op ${app}\`).`;
    }
  }
  return { outcome, message };
}

export const abort: Subcommand = {
  name: NAME,
  usage: 'abort <cluster/namespace/rollout>',
  summary: 'Abort a Rollout (after a confirmation naming what will be aborted): traffic goes back to the stable version.',
  examples: ['/glidepath abort prod/shop/checkout'],
  async run(ctx, text) {
    const words = splitWords(text, NAME, [], []);
    if (words.positional.length !== 1) throw new UsageError('name exactly one Rollout', NAME);
    const target = parseTarget(words.positional[0]!, NAME);
    if (target.kind !== 'object') throw new UsageError('name the Rollout as cluster/namespace/rollout', NAME);
    const { where, live } = await stageOfRollout(ctx, target);
    if (!where || !live) throw new UsageError(`no configured stage selects the Rollout ${target.cluster}/${target.namespace}/${target.name} (by namespace and label selector)`, NAME);
    // The same gate the engine applies (config, the cluster's RBAC, or both), so the dialog is never offered to someone it would refuse.
    const gate = await permissionGate(ctx, { action: 'abort', where, writes: rolloutAbort(ctx, target, undefined).writes });
    if (!gate.decision.allowed) {
      // No dialog for someone who may not abort: the attempt is refused (and audited) now.
      const { message } = await abortConfirmed(ctx, { c: target.cluster, ns: target.namespace, n: target.name });
      await ctx.slack.reply(message);
      return;
    }
    const state = deriveRolloutState(live);
    if (!state.actions.abort) {
      const why = state.aborted ? 'it is already aborted' : 'it is fully promoted: there is nothing to abort';
      await ctx.slack.reply({ text: `:information_source: ${target.cluster}/${target.namespace}/${target.name} cannot be aborted: ${why}` });
      return;
    }
    const step = state.step ? `step ${Math.min(state.step.index + 1, state.step.count ?? Infinity)}${state.step.count ? `/${state.step.count}` : ''}` : 'no canary step';
    const weight = state.weight !== undefined ? `${state.weight}%` : 'unknown';
    const meta: AbortDialogMetadata = { c: target.cluster, ns: target.namespace, n: target.name, ...(state.podHash ? { h: state.podHash } : {}), channel: ctx.channel };
    await ctx.slack.openDialog(
      confirmModal({
        callbackId: ABORT_DIALOG_CALLBACK_ID,
        metadata: encodeAbortDialog(meta),
        title: 'Abort the Rollout?',
        submit: 'Abort',
        blocks: [
        section(
          `*Cluster:* ${target.cluster}\n*Namespace:* ${target.namespace}\n*Rollout:* ${target.name}\n*Current step:* ${step}\n*Canary weight:* ${weight}\n*Phase:* ${state.phase}`,
        ),
        section('Aborting sends all traffic back to the stable version. It is not undone from here: after a fix, retry the Rollout, or revert in git.'),
        ],
      }),
    );
  },
};
