/**
 * `node dist/src/main.js check`: reads the environment and the config exactly as start-up does,
 * then asks every cluster, Redis, Slack and Kargo's API what start-up and the first release would
 * find out the hard way. One plain-text line per check (`ok`, `warn`, `FAIL`, then what is wrong
 * and what to do); exit 1 on any FAIL. Nothing is changed anywhere and no secret is printed.
 */
import { parseEnv, type Env } from '../config/env.js';
import { ConfigError } from '../config/errors.js';
import { configFromEnv, type ConfigFile } from '../config/file.js';
import { kargoApiEndpoints, type KargoApiEndpoint } from '../config/kargo-api.js';
import { fail, formatLine, ok, within, type CheckLine } from './check-line.js';
import { checkCluster } from './check-kube.js';
import { checkRedis } from './check-redis.js';
import { checkSlack } from './check-slack.js';

export const CHECK_USAGE =
  'usage: glidepath check   checks the environment, the config (GLIDEPATH_CONFIG), every cluster (context, API server, RBAC), Redis, Slack and Kargo\'s API; one line per check, exit 1 on any FAIL';

/** Each call's own bound: a check never hangs on a server that accepts and never answers. */
export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

export interface CheckOptions {
  timeoutMs?: number;
}

function problems(subject: string, err: unknown): CheckLine[] {
  if (!(err instanceof ConfigError)) throw err;
  // "environment" problems name their variable already; a file's are prefixed with its path.
  return err.problems.map((p) => fail(subject, err.source === 'environment' ? p : `${err.source}: ${p}`));
}

export async function runCheck(args: readonly string[], source: NodeJS.ProcessEnv = process.env, options: CheckOptions = {}): Promise<CheckLine[]> {
  if (args.length > 0) throw new ConfigError('arguments', [`unknown argument ${JSON.stringify(args[0])}; ${CHECK_USAGE}`]);
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let env: Env;
  try {
    env = parseEnv(source);
  } catch (err) {
    return problems('environment', err);
  }
  const lines: CheckLine[] = [ok('environment', 'parses')];
  let config: ConfigFile | undefined;
  try {
    config = configFromEnv(env);
    lines.push(ok('config', `${env.GLIDEPATH_CONFIG}: ${config.clusters.length} cluster(s), ${config.pipelines.length} pipeline(s)${config.pipelineTemplates.length > 0 ? `, ${config.pipelineTemplates.length} pipeline template(s)` : ''}`));
  } catch (err) {
    lines.push(...problems('config', err));
  }
  // Redis and the Slack token need only the environment: checked even when the config is bad.
  let kargoApis = new Map<string, KargoApiEndpoint>();
  if (config) {
    try {
      kargoApis = kargoApiEndpoints(config, env);
    } catch (err) {
      lines.push(...problems('kargo api', err));
    }
  }
  const cfg = config;
  const channels = new Set(cfg?.pipelines.map((p) => p.channel)).size;
  // Independent, so at once; printed in a fixed order. Each group is bounded by its calls' timeouts.
  const groups = await Promise.all([
    ...(cfg?.clusters ?? []).map((c) => within(4 * timeoutMs, `cluster ${c.name}`, checkCluster(c, cfg as ConfigFile, kargoApis.get(c.name), timeoutMs))),
    within(3 * timeoutMs, 'redis', checkRedis(env, timeoutMs)),
    within((2 + channels) * timeoutMs, 'slack', checkSlack(env, cfg, timeoutMs)),
  ]);
  return [...lines, ...groups.flat()];
}

/** Prints the lines on stdout (the report is the command's output, failures included); the exit code. */
export function printCheck(lines: readonly CheckLine[], write: (text: string) => void = (t) => process.stdout.write(t)): number {
  for (const line of lines) write(`${formatLine(line)}\n`);
  return lines.some((l) => l.mark === 'FAIL') ? 1 : 0;
}
