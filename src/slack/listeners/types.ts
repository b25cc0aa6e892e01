/** A group of Slack listeners for one surface, registered from an explicit list (never by import side effect). */
import type { App } from '@slack/bolt';
import type { Logger } from 'pino';
import type { ConfigFile } from '../../config/file.js';
import type { ReleaseReader } from '../../releases/ports.js';

export interface ListenerDeps {
  config: ConfigFile;
  releases: ReleaseReader;
  logger: Logger;
}

export interface ListenerGroup {
  name: string;
  register(app: App, deps: ListenerDeps): void;
}
