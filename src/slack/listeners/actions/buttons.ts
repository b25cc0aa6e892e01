/**
 * The buttons: Approve and Abort on "paused" replies, Refresh-and-approve on a freshness refusal,
 * the confirmation of a promote by selector, and the abort dialog's submit. Each click is checked
 * against the cluster again (the operations refuse with what changed); after an action the
 * message shows who did what and loses its buttons.
 */
import type { App, BlockAction, ButtonAction, RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import { abortConfirmed } from '../../../../commands/abort.js';
import type { Outcome } from '../../../../commands/act.js';
import { approveAppSetStep, approveRollout, outcomeMessage, type AppSetRef } from '../../../../commands/approve.js';
import { abortDialogMetadata, ABORT_DIALOG_CALLBACK_ID, parseValue, promoteConfirmValue, PROMOTE_CONFIRM_ACTION_ID, refreshApproveValue, REFRESH_APPROVE_ACTION_ID } from '../../../../commands/buttons.js';
import { confirmPromote } from '../../../../commands/promote.js';
import type { CommandContext, CommandServices, SlackText } from '../../../../commands/types.js';
import { stageOfRollout, stagesOfObject } from '../../../../commands/where.js';
import { progressText } from '../../../kube/freshness.js';
import { authorize } from '../../../policy/permissions.js';
import { dispatch } from '../../../../commands/dispatch.js';
import { KubeActionError } from '../../../kube/errors.js';
import { getStage } from '../../../kube/reads.js';
import { FINISHED_RELEASE_STATUSES } from '../../../releases/record.js';
import { ABORT_ACTION_ID, APPROVE_ACTION_ID, PROMOTE_ACTION_ID } from '../../render/buttons.js';
import { commandContext, NOT_CONFIGURED, slackSurface } from '../surface.js';
import type { ListenerGroup } from '../types.js';

/** The renderer's button value (render/buttons.ts ButtonValue), validated: a click is untrusted input. */
const renderedButton = z.object({
  v: z.literal(1),
  p: z.string(),
  r: z.string(),
  st: z.string().optional(),
  k: z.string(),
  c: z.string(),
  ns: z.string(),
  n: z.string(),
  g: z.number().int().optional(),
  h: z.string().optional(),
  s: z.number().int().optional(),
});

interface ClickArgs {
  body: BlockAction<ButtonAction>;
  action: ButtonAction;
  respond: RespondFn;
  client: WebClient;
}

function clickContext(services: CommandServices, { body, respond, client }: ClickArgs): CommandContext {
  const channel = body.channel?.id ?? body.container?.channel_id ?? '';
  const slack = slackSurface({ client, channel, userId: body.user.id, respond, triggerId: body.trigger_id });
  return commandContext(services, { id: body.user.id, ...(body.user.username ? { name: body.user.username } : {}) }, channel, slack);
}

const promoteButtonValue = z.object({ v: z.literal(1), p: z.string(), r: z.string(), st: z.string(), from: z.string() });

/** Shows on the clicked message who did what, without its buttons (kept for a first of two approvals). */
async function markMessage(ctx: CommandContext, args: ClickArgs, line: string, keepButtons: boolean): Promise<void> {
  const message = args.body.message as { ts?: string; text?: string; blocks?: { type?: string }[] } | undefined;
  const ts = message?.ts ?? args.body.container?.message_ts;
  const original = message?.blocks ?? [{ type: 'section', text: { type: 'mrkdwn', text: message?.text || ' ' } }];
  const kept = original.filter((b) => keepButtons || b.type !== 'actions');
  const context = { type: 'context', elements: [{ type: 'mrkdwn', text: line.slice(0, 2900) }] };
  const marked = { text: `${message?.text ?? ''}\n${line}`.trim(), blocks: [...kept, context] };
  const ephemeral = (args.body.container as { is_ephemeral?: boolean } | undefined)?.is_ephemeral === true;
  try {
    // The writer's messages are the bot's own: edit them. An ephemeral answer (or one chat.update
    // may not touch) is replaced through the click's response_url instead.
    if (!ephemeral && ts && ctx.channel) await ctx.slack.update({ channel: ctx.channel, ts }, marked);
    else await ctx.slack.reply({ ...marked, replaceOriginal: true });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, 'could not edit the clicked message; replacing it through response_url');
    await ctx.slack.reply({ ...marked, replaceOriginal: true }).catch(() => undefined);
  }
}

async function afterAction(ctx: CommandContext, args: ClickArgs, outcome: Outcome, message: SlackText): Promise<void> {
  if (outcome.kind === 'done' || outcome.kind === 'first-approval') await markMessage(ctx, args, `${message.text} (by <@${ctx.user.id}>)`, outcome.kind === 'first-approval');
  else await ctx.slack.reply(message);
}

function withServices(deps: { commands?: CommandServices | undefined }, handler: (services: CommandServices, args: ClickArgs) => Promise<void>) {
  return async (args: ClickArgs & { ack: () => Promise<void> }): Promise<void> => {
    await args.ack();
    if (!deps.commands) {
      await args.respond({ response_type: 'ephemeral', replace_original: false, text: NOT_CONFIGURED });
      return;
    }
    try {
      await handler(deps.commands, args);
    } catch (err) {
      // A cluster or Redis failure outside an action's own handling: say so instead of going quiet.
      deps.commands.logger.error({ err, action: args.action.action_id, user: args.body.user.id }, 'button failed');
      const why = err instanceof KubeActionError ? err.message : 'it failed unexpectedly; the Glidepath log has the details';
      await args.respond({ response_type: 'ephemeral', replace_original: false, text: `:x: ${why}` }).catch(() => undefined);
    }
  };
}

export const actionButtons: ListenerGroup = {
  name: 'action-buttons',
  register(app: App, deps) {
    app.action<BlockAction<ButtonAction>>(
      APPROVE_ACTION_ID,
      withServices(deps, async (services, args) => {
        const ctx = clickContext(services, args);
        const value = parseValue(renderedButton, args.action.value);
        if (!value || value.k !== 'Rollout' || value.g === undefined || value.h === undefined || value.s === undefined) {
          await ctx.slack.reply({ text: ':x: This button does not name a Rollout step Glidepath can approve; nothing was changed. Use `/glidepath approve <cluster/namespace/rollout>`.' });
          return;
        }
        const ref = { kind: 'object' as const, cluster: value.c, namespace: value.ns, name: value.n };
        // The stage is judged from the Rollout's live labels, not only from what the button says.
        const { where } = await stageOfRollout(ctx, ref);
        if (!where) {
          await ctx.slack.reply({ text: `:x: No configured stage selects ${value.c}/${value.ns}/${value.n} any more; nothing was changed.` });
          return;
        }
        const outcome = await approveRollout(ctx, where, ref, { generation: value.g, podHash: value.h, stepIndex: value.s }, value.r);
        await afterAction(ctx, args, outcome, outcomeMessage(outcome));
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      ABORT_ACTION_ID,
      withServices(deps, async (services, args) => {
        const ctx = clickContext(services, args);
        const value = parseValue(renderedButton, args.action.value);
        if (!value || value.k !== 'Rollout') {
          await ctx.slack.reply({ text: ':x: This button does not name a Rollout; nothing was changed.' });
          return;
        }
        // The button carries Slack's own confirm dialog: the click is the confirmation.
        const { outcome, message } = await abortConfirmed(ctx, { c: value.c, ns: value.ns, n: value.n, ...(value.h ? { h: value.h } : {}) });
        await afterAction(ctx, args, outcome, message);
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      REFRESH_APPROVE_ACTION_ID,
      withServices(deps, async (services, args) => {
        const ctx = clickContext(services, args);
        const value = parseValue(refreshApproveValue, args.action.value);
        const where = value ? stagesOfObject(services.config, { kind: 'object', cluster: value.c, namespace: value.ns, name: value.n }, 'ApplicationSet')[0] : undefined;
        if (!value || !where) {
          await ctx.slack.reply({ text: ':x: This button does not name an ApplicationSet of a configured stage; nothing was changed.' });
          return;
        }
        const ref: AppSetRef = { cluster: value.c, namespace: value.ns, name: value.n };
        // No refresh on behalf of someone who may not approve: the attempt is refused (and audited) at once.
        const decision = await authorize(services.config, { pipeline: where.pipeline.name, stage: where.stage.name }, 'approve', ctx.user.id, services.groups);
        if (!decision.allowed) {
          const { message } = await approveAppSetStep(ctx, where, ref, value.step, value.rev, undefined);
          await ctx.slack.reply(message);
          return;
        }
        const snapshot = await services.kube.checkFreshness(ref.cluster, ref.namespace, ref.name);
        if (snapshot.report.stale.length > 0) {
          await ctx.slack.reply({ text: `:arrows_counterclockwise: Refreshing ${snapshot.report.stale.length} stale Applications of ${ref.name} (${progressText(snapshot.report)}), then approving step ${value.step}…` });
          const waited = await services.kube.refreshAndWait(ref.cluster, ref.namespace, snapshot, { timeoutMs: services.followTimeoutMs ?? 5 * 60_000, ...(services.now ? { now: services.now } : {}) });
          if (waited.report.stale.length > 0) {
            await ctx.slack.reply({ text: `:warning: Still not fresh after ${waited.timedOut ? 'the timeout' : 'refreshing'} (${progressText(waited.report)}): ${waited.report.stale.map((s) => `${s.name} (${s.reason ?? 'stale'})`).join(', ')}; nothing was approved.` });
            return;
          }
        }
        const { outcome, message } = await approveAppSetStep(ctx, where, ref, value.step, value.rev, undefined);
        await afterAction(ctx, args, outcome, message);
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      PROMOTE_CONFIRM_ACTION_ID,
      withServices(deps, async (services, args) => {
        const ctx = clickContext(services, args);
        const value = parseValue(promoteConfirmValue, args.action.value);
        if (!value) {
          await ctx.slack.reply({ text: ':x: This button does not name Stages to promote; nothing was changed.' });
          return;
        }
        const result = await confirmPromote(ctx, value);
        await markMessage(ctx, args, `<@${ctx.user.id}> confirmed:\n${result.text}`, false);
        await ctx.slack.reply({ ...result, inChannel: true });
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      PROMOTE_ACTION_ID,
      withServices(deps, async (services, args) => {
        const ctx = clickContext(services, args);
        const value = parseValue(promoteButtonValue, args.action.value);
        const pipeline = value ? services.config.pipelines.find((p) => p.name === value.p) : undefined;
        const target = pipeline?.stages.find((s) => s.name === value?.st);
        if (!value || !pipeline || !target) {
          await ctx.slack.reply({ text: ':x: This button names no configured stage to promote to; nothing was changed.' });
          return;
        }
        if (!target.kargo) {
          await ctx.slack.reply({ text: `:information_source: ${value.p}@${value.st} is not a Kargo stage: it moves on with the release itself. When it pauses, approve it with \`/glidepath approve ${value.p}@${value.st}\`. Nothing was changed.` });
          return;
        }
        const release = await services.releases.get(value.p, value.r);
        if (!release || FINISHED_RELEASE_STATUSES.includes(release.status)) {
          await ctx.slack.reply({ text: `:x: Release \`${value.r}\` is no longer in flight (${release?.status ?? 'gone'}) since the button was shown; nothing was changed.` });
          return;
        }
        // What proved healthy upstream is what moves on, when the upstream stage is one Kargo Stage of the same project.
        const from = pipeline.stages.find((s) => s.name === value.from);
        let freight: string | undefined;
        if (from?.kargo?.stage && from.cluster === target.cluster && from.kargo.project === target.kargo.project) {
          const upstream = await getStage(services.clusters.api(from.cluster), from.kargo.project, from.kargo.stage);
          freight = Object.values(upstream.status?.freightHistory?.[0]?.items ?? {})[0]?.name ?? undefined;
        }
        await dispatch(ctx, `promote ${value.p}@${value.st}${freight ? ` --freight ${freight}` : ''}`);
        await markMessage(ctx, args, `<@${ctx.user.id}> asked to promote ${freight ? `Freight ${freight} ` : ''}to ${value.st}`, false);
      }),
    );

    app.view(ABORT_DIALOG_CALLBACK_ID, async ({ ack, view, body, client }) => {
      await ack();
      const meta = parseValue(abortDialogMetadata, view.private_metadata);
      if (!deps.commands || !meta) {
        deps.logger.warn({ user: body.user.id }, 'abort dialog submitted without usable metadata');
        return;
      }
      const slack = slackSurface({ client, channel: meta.channel, userId: body.user.id });
      const ctx = commandContext(deps.commands, { id: body.user.id, ...(body.user.name ? { name: body.user.name } : {}) }, meta.channel, slack);
      const { message } = await abortConfirmed(ctx, meta);
      await slack.reply({ ...message, inChannel: true });
    });
  },
};
