/** Every Slack listener group, in one list. */
import { approvalButtons } from './actions/approval-not-yet-available.js';
import { appHome } from './events/app-home.js';
import type { ListenerGroup } from './types.js';

export const LISTENER_GROUPS: readonly ListenerGroup[] = [appHome, approvalButtons];
