import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'glidepath'): Logger {
  return pino({ name, level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}
