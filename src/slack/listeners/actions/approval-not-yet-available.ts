/**
 * The Approve and Abort buttons are rendered today; what they do arrives with the commands work.
 * Until then a click gets an honest answer instead of silence (an unacked click shows the user
 * an error icon).
 */
import type { App } from '@slack/bolt';
import { ABORT_ACTION_ID, APPROVE_ACTION_ID } from '../../render/buttons.js';
import type { ListenerGroup } from '../types.js';

export const NOT_YET_AVAILABLE =
  'Approving or aborting from Slack is not available yet in this Glidepath version. ' +
  'Nothing was changed. Use `kubectl argo rollouts promote` or `abort` meanwhile.';

export const approvalButtons: ListenerGroup = {
  name: 'approval-buttons',
  register(app: App) {
    for (const actionId of [APPROVE_ACTION_ID, ABORT_ACTION_ID]) {
      app.action(actionId, async ({ ack, respond }) => {
        await ack();
        await respond({ response_type: 'ephemeral', replace_original: false, text: NOT_YET_AVAILABLE });
      });
    }
  },
};
