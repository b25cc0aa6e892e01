/** The handlers the Slack listeners call (src/slack/listeners/command-port.ts), given them by the composition root. */
import type { CommandHandlers } from '../src/slack/listeners/command-port.js';
import { abortConfirmed } from './abort.js';
import { approveClicked, refreshAndApprove } from './approve.js';
import { dispatch } from './dispatch.js';
import { confirmPromote, promoteClicked } from './promote.js';
import { rejectClicked, rejectConfirmed } from './reject.js';

export const commandHandlers: CommandHandlers = { dispatch, approveClicked, refreshAndApprove, abortConfirmed, confirmPromote, promoteClicked, rejectClicked, rejectConfirmed };
