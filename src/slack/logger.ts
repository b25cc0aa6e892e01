/** Bolt's Logger interface over our pino logger, so Slack's own messages land in the same log stream. */
import { LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import type { Logger } from 'pino';

const LEVELS: Record<string, LogLevel> = { debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN, error: LogLevel.ERROR };

export function boltLogger(log: Logger): BoltLogger {
  let name = 'bolt';
  const line = (msg: unknown[]) => msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
  return {
    debug: (...msg: unknown[]) => log.debug({ component: name }, line(msg)),
    info: (...msg: unknown[]) => log.info({ component: name }, line(msg)),
    warn: (...msg: unknown[]) => log.warn({ component: name }, line(msg)),
    error: (...msg: unknown[]) => log.error({ component: name }, line(msg)),
    setLevel: () => undefined,
    getLevel: () => LEVELS[log.level] ?? LogLevel.INFO,
    setName: (n: string) => {
      name = n;
    },
  };
}
