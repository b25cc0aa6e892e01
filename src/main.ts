/**
 * `npm start`: run Glidepath from the environment (see .env.example), in the roles GLIDEPATH_ROLE
 * names; or one of its subcommands. Each path imports only what it runs: `--help` and `check`
 * answer without loading the bot (Bolt, BullMQ and client-node are most of a cold start).
 */
import { StartupError } from './config/errors.js';

async function main(): Promise<void> {
  const [{ parseEnv }, { startupConfig }, { startGlidepath }, { createLogger }] = await Promise.all([
    import('./config/env.js'),
    import('./config/file.js'),
    import('./glidepath.js'),
    import('./obs/logger.js'),
  ]);
  const env = parseEnv();
  const { config, path, hash } = startupConfig(env);
  const logger = createLogger(env.LOG_LEVEL);
  // The file is watched for changes (a ConfigMap's symlink swap) and re-read on SIGHUP.
  const glidepath = await startGlidepath({ env, config, logger, configSource: { path, hash, variable: 'GLIDEPATH_CONFIG' } });
  process.on('SIGHUP', () => void glidepath.reloadConfig('SIGHUP').catch((err: unknown) => logger.error({ err }, 'config reload failed')));
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

const USAGE = [
  'usage: glidepath                    run the bot, in the roles GLIDEPATH_ROLE names (configured by the environment, see .env.example)',
  '       glidepath check              check the environment, the config, clusters, Redis, Slack and Kargo\'s API; exit 1 on any FAIL',
  '       glidepath prune-notified [--dry-run]   remove the notifications engine\'s notified annotation from tracked Rollouts',
  '       glidepath <command> --help   this text, or the command\'s',
].join('\n');

const HELP = new Set(['--help', '-h', 'help']);

/** The subcommand's usage on stdout and exit 0 for `--help`; anything else runs it. */
async function dispatch(argv: readonly string[]): Promise<void> {
  const [subcommand, ...args] = argv;
  const help = args.some((a) => HELP.has(a));
  if (subcommand === undefined) return main();
  if (HELP.has(subcommand)) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (subcommand === 'prune-notified') {
    const { runPruneNotified, printPruneResult, PRUNE_USAGE } = await import('./cli/prune-notified.js');
    if (help) return void process.stdout.write(`${PRUNE_USAGE}\n`);
    process.exit(printPruneResult(await runPruneNotified(args)));
  }
  if (subcommand === 'check') {
    const { runCheck, printCheck, CHECK_USAGE } = await import('./cli/check.js');
    if (help) return void process.stdout.write(`${CHECK_USAGE}\n`);
    process.exit(printCheck(await runCheck(args)));
  }
  // A typo (`glidepath chek`) used to start the bot; now it says so.
  process.stderr.write(`glidepath: unknown command ${JSON.stringify(subcommand.slice(0, 40))}\n${USAGE}\n`);
  process.exit(1);
}

const run: Promise<void> = dispatch(process.argv.slice(2));

run.catch((err: unknown) => {
  if (err instanceof StartupError) {
    console.error(`glidepath: ${err.message}`);
  } else {
    console.error(`glidepath: cannot start: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
