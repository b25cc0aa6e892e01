/** `npm start`: run Glidepath from the environment (see .env.example), in the roles GLIDEPATH_ROLE names. */
import { parseEnv } from './config/env.js';
import { ConfigError } from './config/errors.js';
import { loadConfigFile } from './config/file.js';
import { startGlidepath } from './glidepath.js';
import { createLogger } from './obs/logger.js';
import { SlackStartupError } from './slack/errors.js';

async function main(): Promise<void> {
  const env = parseEnv();
  if (!env.GLIDEPATH_CONFIG) {
    throw new ConfigError('environment', ['GLIDEPATH_CONFIG: set it to the path of the YAML config (see deploy/config.example.yaml)']);
  }
  const config = loadConfigFile(env.GLIDEPATH_CONFIG);
  const logger = createLogger(env.LOG_LEVEL);
  const glidepath = await startGlidepath({ env, config, logger });
  const stop = async (signal: string, drainMs: number) => {
    logger.info({ signal, drainMs }, 'shutting down: readiness fails, then the jobs in hand finish');
    try {
      await glidepath.close({ drainMs });
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  // SIGTERM is the orchestrator's (drain first); SIGINT is a person at a terminal (no drain).
  process.once('SIGTERM', () => void stop('SIGTERM', env.SHUTDOWN_DRAIN_MS));
  process.once('SIGINT', () => void stop('SIGINT', 0));
}

const subcommand = process.argv[2];
const run: Promise<void> =
  subcommand === 'prune-notified'
    ? import('./cli/prune-notified.js').then(async ({ runPruneNotified, printPruneResult }) => process.exit(printPruneResult(await runPruneNotified(process.argv.slice(3)))))
    : main();

run.catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof SlackStartupError) {
    console.error(`glidepath: ${err.message}`);
  } else {
    console.error(`glidepath: cannot start: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
