/** A group of Slack listeners for one surface, registered from an explicit list (never by import side effect). */
import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ConfigFile } from '../../config/file.js';
import type { ReleaseReader } from '../../releases/store/ports.js';
import type { DeliveryReader } from '../../releases/store/delivery-stats.js';
import type { CommandPort } from './command-port.js';

export interface ListenerDeps {
  config: ConfigFile;
  releases: ReleaseReader;
  /** The delivery roll-ups (App Home figures); absent: the Home tab shows releases only. */
  delivery?: DeliveryReader;
  logger: Logger;
  /** Clusters, audit and approvals for /glidepath and the buttons; absent when no cluster is reachable. */
  commands?: CommandPort;
}

export interface ListenerGroup {
  name: string;
  register(app: App, deps: ListenerDeps): void;
}
