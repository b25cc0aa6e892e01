/**
 * The sandbox's options, from the command line (`npm run sandbox -- --speed 60`) and the
 * environment. Bad values are refused with the expected form, before anything starts.
 */
import { resolve } from 'node:path';
import { z } from 'zod';

export interface SandboxOptions {
  /** How many times faster than real time the clusters and the story run. */
  speed: number;
  /** Stop after this many wall-clock seconds (0: run until Ctrl-C). */
  seconds: number;
  /**
   * The sandbox decides for you (approves, types, confirms) after a while, as a Slack user of its
   * own: --auto, SANDBOX_AUTO=1, or any --seconds (a run that stops by itself has nobody to wait
   * for). Otherwise the story holds at each decision until you act in the page or press Enter.
   */
  auto: boolean;
  /** With auto: how many story seconds the sandbox leaves you before it acts (SANDBOX_AUTO_AFTER, default 20). */
  autoAfterSeconds: number;
  /** Where the kubeconfig and config are written. */
  dir: string;
  /** Glidepath's port ("0" picks a free one). */
  port: string;
  redisUrl: string;
  logLevel: string;
}

const Env = z.object({
  SANDBOX_SPEED: z.coerce.number().positive('SANDBOX_SPEED must be a positive number, e.g. SANDBOX_SPEED=5').default(1),
  SANDBOX_SECONDS: z.coerce.number().min(0, 'SANDBOX_SECONDS must be 0 (run until Ctrl-C) or more').default(0),
  SANDBOX_AUTO: z.enum(['', '0', '1', 'true', 'false'], { message: 'SANDBOX_AUTO must be 1 or 0 (1: the sandbox acts for you, as --auto)' }).default(''),
  SANDBOX_AUTO_AFTER: z.coerce.number().min(0, 'SANDBOX_AUTO_AFTER must be 0 or more story seconds, e.g. SANDBOX_AUTO_AFTER=20').default(20),
  SANDBOX_DIR: z.string().min(1).default('.sandbox'),
  PORT: z.string().regex(/^\d{1,5}$/, 'PORT must be a port number, e.g. PORT=3000 (PORT=0 picks a free one)').default('3000'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  LOG_LEVEL: z.string().default('warn'),
});

export function parseSandboxOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SandboxOptions {
  const raw: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.split('=', 2) as [string, string | undefined];
    const value = inline ?? argv[i + 1];
    if (arg === '--auto') {
      raw.SANDBOX_AUTO = '1';
    } else if (flag === '--speed' || flag === '--seconds') {
      if (value === undefined) throw new Error(`${flag} needs a number, e.g. ${flag} 5`);
      raw[flag === '--speed' ? 'SANDBOX_SPEED' : 'SANDBOX_SECONDS'] = value;
      if (inline === undefined) i++;
    } else {
      throw new Error(`unknown option ${arg}: the sandbox takes --speed N, --seconds N and --auto (or SANDBOX_SPEED, SANDBOX_SECONDS, SANDBOX_AUTO, SANDBOX_AUTO_AFTER, SANDBOX_DIR, PORT)`);
    }
  }
  const parsed = Env.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => i.message).join('; '));
  const e = parsed.data;
  const auto = e.SANDBOX_AUTO === '1' || e.SANDBOX_AUTO === 'true' || e.SANDBOX_SECONDS > 0;
  return { speed: e.SANDBOX_SPEED, seconds: e.SANDBOX_SECONDS, auto, autoAfterSeconds: e.SANDBOX_AUTO_AFTER, dir: resolve(e.SANDBOX_DIR), port: e.PORT, redisUrl: e.REDIS_URL, logLevel: e.LOG_LEVEL };
}
