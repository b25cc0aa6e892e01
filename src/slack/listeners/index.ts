/** Every Slack listener group, in one list. */
import { actionButtons } from './actions/buttons.js';
import { glidepathCommand } from './commands/glidepath.js';
import { appHome } from './events/app-home.js';
import type { ListenerGroup } from './types.js';

export const LISTENER_GROUPS: readonly ListenerGroup[] = [appHome, glidepathCommand, actionButtons];
