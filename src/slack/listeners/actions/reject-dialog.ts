/**
 * The reject dialog's submit: the reason is read from the dialog, refused in the dialog itself
 * when it is missing or too long (Slack shows the error under the field, nothing is held), else
 * handed to the typed command. The answer is for the person who submitted (ephemeral); the
 * rejection is the channel's business too: the action engine puts its line in the release thread.
 */
import type { App } from '@slack/bolt';
import { reasonProblem } from '../../../actions/rejections.js';
import { decodeRejectDialog, REJECT_DIALOG_CALLBACK_ID, REJECT_REASON_ACTION_ID, REJECT_REASON_BLOCK_ID } from '../../buttons.js';
import { commandContext, slackSurface } from '../surface.js';
import type { ListenerDeps } from '../types.js';

export function rejectDialog(app: App, deps: ListenerDeps): void {
  app.view(REJECT_DIALOG_CALLBACK_ID, async ({ ack, view, body, client }) => {
    const reason = view.state.values[REJECT_REASON_BLOCK_ID]?.[REJECT_REASON_ACTION_ID]?.value ?? '';
    const problem = reasonProblem(reason);
    if (problem) {
      await ack({ response_action: 'errors', errors: { [REJECT_REASON_BLOCK_ID]: problem } });
      return;
    }
    await ack();
    const meta = decodeRejectDialog(view.private_metadata);
    if (!deps.commands || meta.kind === 'refused') {
      deps.logger.warn({ user: body.user.id }, 'reject dialog submitted without usable metadata');
      return;
    }
    const slack = slackSurface({ client, channel: meta.value.channel, userId: body.user.id });
    const ctx = commandContext(deps.commands.services, { id: body.user.id, ...(body.user.name ? { name: body.user.name } : {}) }, meta.value.channel, slack);
    try {
      const { message } = await deps.commands.handlers.rejectConfirmed(ctx, meta.value, reason);
      await slack.reply(message);
    } catch (err) {
      deps.logger.error({ err, user: body.user.id }, 'reject dialog failed');
      await slack.reply({ text: ':x: The rejection failed unexpectedly; nothing was held. The Glidepath log has the details.' }).catch(() => undefined);
    }
  });
}
