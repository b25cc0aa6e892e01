/**
 * The buttons: Approve, Reject and Abort on "paused" replies, Refresh-and-approve on a freshness refusal,
 * Promote on a healthy stage, the confirmation of a promote by selector, and the abort dialog's
 * submit. Each listener only translates: it acks, decodes the value (src/slack/buttons.ts; a bad
 * one is answered with what to do instead), calls the typed command, and shows its answer. After
 * an action the clicked message shows who did what and loses its buttons.
 */
import type { App, BlockAction, ButtonAction, RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { ClickAnswer, CommandContext, CommandHandlers, CommandPort, CommandServices } from '../command-port.js';
import { KubeActionError } from '../../../kube/errors.js';
import {
  ABORT_ACTION_ID,
  ABORT_DIALOG_CALLBACK_ID,
  APPROVE_ACTION_ID,
  decodeAbortClick,
  decodeAbortDialog,
  decodeApproveClick,
  decodePromoteClick,
  decodePromoteConfirmClick,
  decodeRefreshApproveClick,
  decodeRejectClick,
  PROMOTE_ACTION_ID,
  PROMOTE_CONFIRM_ACTION_ID,
  REFRESH_APPROVE_ACTION_ID,
  REJECT_ACTION_ID,
  type Decoded,
} from '../../buttons.js';
import { rejectDialog } from './reject-dialog.js';
import { commandContext, NOT_CONFIGURED, slackSurface } from '../surface.js';
import type { ListenerGroup } from '../types.js';

interface ClickArgs {
  body: BlockAction<ButtonAction>;
  action: ButtonAction;
  respond: RespondFn;
  client: WebClient;
}

function clickContext(services: CommandServices, { body, respond, client }: ClickArgs): CommandContext {
  const channel = body.channel?.id ?? body.container?.channel_id ?? '';
  const slack = slackSurface({ client, channel, userId: body.user.id, respond, triggerId: body.trigger_id });
  const ctx = commandContext(services, { id: body.user.id, ...(body.user.username ? { name: body.user.username } : {}) }, channel, slack);
  const threadTs = (body.message as { thread_ts?: string } | undefined)?.thread_ts;
  const ephemeral = (body.container as { is_ephemeral?: boolean } | undefined)?.is_ephemeral === true;
  // An ephemeral answer is seen by one person only: the thread still gets its line.
  if (!ephemeral && channel) ctx.clicked = { channel, ...(threadTs ? { threadTs } : {}) };
  return ctx;
}

/**
 * Shows on the clicked message who did what, without its buttons (kept for a first of two approvals).
 * `onAnswer`: the button is on a command's answer (posted through response_url, never by the
 * writer), which only that response_url may replace: chat.update does not find it.
 */
async function markMessage(ctx: CommandContext, args: ClickArgs, line: string, keepButtons: boolean, onAnswer = false): Promise<void> {
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
    if (!ephemeral && !onAnswer && ts && ctx.channel) await ctx.slack.update({ channel: ctx.channel, ts }, marked);
    else await ctx.slack.reply({ ...marked, replaceOriginal: true });
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, 'could not edit the clicked message; replacing it through response_url');
    await ctx.slack.reply({ ...marked, replaceOriginal: true }).catch(() => undefined);
  }
}

async function show(ctx: CommandContext, args: ClickArgs, { outcome, message }: ClickAnswer, onAnswer = false): Promise<void> {
  if (outcome?.kind === 'done' || outcome?.kind === 'first-approval') await markMessage(ctx, args, `${message.text} (by <@${ctx.user.id}>)`, outcome.kind === 'first-approval', onAnswer);
  else await ctx.slack.reply(message);
}

/**
 * Acks, answers honestly when this process cannot act, decodes the button's value (a bad one is
 * refused with what to do instead) and runs `handler` with the click's context.
 */
function onClick<T>(deps: { commands?: CommandPort | undefined }, decode: (raw: string | undefined) => Decoded<T>, handler: (ctx: CommandContext, value: T, args: ClickArgs, handlers: CommandHandlers) => Promise<void>) {
  return async (args: ClickArgs & { ack: () => Promise<void> }): Promise<void> => {
    await args.ack();
    if (!deps.commands) {
      await args.respond({ response_type: 'ephemeral', replace_original: false, text: NOT_CONFIGURED });
      return;
    }
    try {
      const ctx = clickContext(deps.commands.services, args);
      const decoded = decode(args.action.value);
      if (decoded.kind === 'refused') await ctx.slack.reply({ text: decoded.reason });
      else await handler(ctx, decoded.value, args, deps.commands.handlers);
    } catch (err) {
      // A cluster or Redis failure outside an action's own handling: say so instead of going quiet.
      deps.commands.services.logger.error({ err, action: args.action.action_id, user: args.body.user.id }, 'button failed');
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
      onClick(deps, decodeApproveClick, async (ctx, value, args, on) => show(ctx, args, await on.approveClicked(ctx, value))),
    );

    app.action<BlockAction<ButtonAction>>(
      ABORT_ACTION_ID,
      // The button carries Slack's own confirm dialog: the click is the confirmation.
      onClick(deps, decodeAbortClick, async (ctx, value, args, on) => show(ctx, args, await on.abortConfirmed(ctx, { c: value.c, ns: value.ns, n: value.n, ...(value.h ? { h: value.h } : {}) }))),
    );

    app.action<BlockAction<ButtonAction>>(
      REFRESH_APPROVE_ACTION_ID,
      // The button is on the answer to a typed approve (the freshness refusal), not on a thread message.
      onClick(deps, decodeRefreshApproveClick, async (ctx, value, args, on) => show(ctx, args, await on.refreshAndApprove(ctx, value), true)),
    );

    app.action<BlockAction<ButtonAction>>(
      PROMOTE_CONFIRM_ACTION_ID,
      onClick(deps, decodePromoteConfirmClick, async (ctx, value, args, on) => {
        const result = await on.confirmPromote(ctx, value);
        await markMessage(ctx, args, `<@${ctx.user.id}> confirmed:\n${result.text}`, false);
        await ctx.slack.reply({ ...result, inChannel: true });
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      PROMOTE_ACTION_ID,
      onClick(deps, decodePromoteClick, async (ctx, value, args, on) => {
        const asked = await on.promoteClicked(ctx, value);
        if (asked) await markMessage(ctx, args, asked, false);
      }),
    );

    app.action<BlockAction<ButtonAction>>(
      REJECT_ACTION_ID,
      // The dialog asks for the reason; its submit (reject-dialog.ts) is the rejection.
      onClick(deps, decodeRejectClick, async (ctx, value, _args, on) => on.rejectClicked(ctx, value)),
    );
    rejectDialog(app, deps);

    app.view(ABORT_DIALOG_CALLBACK_ID, async ({ ack, view, body, client }) => {
      await ack();
      const meta = decodeAbortDialog(view.private_metadata);
      if (!deps.commands || meta.kind === 'refused') {
        deps.logger.warn({ user: body.user.id }, 'abort dialog submitted without usable metadata');
        return;
      }
      const slack = slackSurface({ client, channel: meta.value.channel, userId: body.user.id });
      const ctx = commandContext(deps.commands.services, { id: body.user.id, ...(body.user.name ? { name: body.user.name } : {}) }, meta.value.channel, slack);
      const { message } = await deps.commands.handlers.abortConfirmed(ctx, meta.value);
      // For the person who submitted (with the way back): ephemeral. An abort that happened is
      // the channel's business: the action engine has put its line in the release thread.
      await slack.reply(message);
    });
  },
};
