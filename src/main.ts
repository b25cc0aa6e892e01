/** `npm start`: run Glidepath from the environment (see .env.example). */
import { startGlidepath } from './app.js';
import { parseEnv } from './config/env.js';
import { ConfigError } from './config/errors.js';
import { loadConfigFile } from './config/file.js';
import { createLogger } from './obs/logger.js';
import { createMetrics } from './obs/metrics.js';
import { SlackStartupError } from './slack/errors.js';
import { startSlackService } from './slack/service.js';

async function main(): Promise<void> {
  const env = parseEnv();
  if (!env.GLIDEPATH_CONFIG) {
    throw new ConfigError('environment', ['GLIDEPATH_CONFIG: set it to the path of the YAML config (see deploy/config.example.yaml)']);
  }
  const config = loadConfigFile(env.GLIDEPATH_CONFIG);
  const logger = createLogger(env.LOG_LEVEL);
  const metrics = createMetrics();
  // Without a bot token Glidepath still ingests and reduces; thread effects are only logged.
  const slack = env.SLACK_BOT_TOKEN ? await startSlackService({ env, config, logger, registry: metrics.registry }) : undefined;
  if (!slack) logger.warn('SLACK_BOT_TOKEN is not set: release threads are logged, not posted');
  const app = await startGlidepath({ env, config, logger, metrics, ...(slack ? { threads: slack.threads, mounts: slack.mounts } : {}) });
  await slack?.start();
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await slack?.close();
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
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
