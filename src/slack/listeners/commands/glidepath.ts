/** `/glidepath …`: acked at once (Slack waits 3 s), then the subcommand answers through response_url. */
import type { App } from '@slack/bolt';
import { commandContext, NOT_CONFIGURED, slackSurface } from '../surface.js';
import type { ListenerGroup } from '../types.js';

const GLIDEPATH_COMMAND = '/glidepath';

export const glidepathCommand: ListenerGroup = {
  name: 'glidepath-command',
  register(app: App, deps) {
    app.command(GLIDEPATH_COMMAND, async ({ ack, command, respond, client }) => {
      await ack();
      if (!deps.commands) {
        await respond({ response_type: 'ephemeral', text: NOT_CONFIGURED });
        return;
      }
      const slack = slackSurface({ client, channel: command.channel_id, userId: command.user_id, respond, triggerId: command.trigger_id });
      await deps.commands.handlers.dispatch(commandContext(deps.commands.services, { id: command.user_id, name: command.user_name }, command.channel_id, slack), command.text ?? '');
    });
  },
};
