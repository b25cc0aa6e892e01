/**
 * Start-up that explains itself (issue 12, item 5; issue 9, item 10): `npm start` reads `.env`
 * and runs compiled code without a type check, and every bad setting names itself and the fix.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import type { ConfigError } from '../../src/config/errors.js';
import { parseConfigFile } from '../../src/config/file.js';
import { configProblems } from '../helpers/pipeline.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainTs = join(root, 'src/main.ts');
const tsxLoader = join(root, 'node_modules/tsx/dist/loader.mjs');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gp-startup-'));
  dirs.push(dir);
  return dir;
}

/** The environment of the test runner without the variables these tests set through `.env`. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['REDIS_URL', 'GLIDEPATH_CONFIG', 'API_READ_TOKEN', 'INGEST_TOKENS', 'METRICS_TOKEN']) delete env[name];
  return env;
}

const problems = (source: NodeJS.ProcessEnv): string[] => configProblems(() => parseEnv(source));

describe('npm start', () => {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;

  it('runs the compiled code without a type check', () => {
    expect(script).not.toMatch(/\btsc\b|npm run build/);
    expect(script).toMatch(/ dist\/src\/main\.js$/);
  });

  /** Runs the start script from `cwd`, with the source (through tsx) in place of the not yet built `dist/`. */
  async function start(cwd: string): Promise<{ code: number; stderr: string }> {
    const [node, ...args] = script.split(' ');
    expect(node).toBe('node');
    const argv = args.flatMap((arg) => (arg === 'dist/src/main.js' ? ['--import', tsxLoader, mainTs] : [arg]));
    const result = await promisify(execFile)(process.execPath, argv, { cwd, env: cleanEnv() }).catch((e: { code: number; stderr: string }) => e);
    return { code: (result as { code?: number }).code ?? 0, stderr: result.stderr };
  }

  it('reads .env from the working directory when there is one', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'REDIS_URL=127.0.0.1:6379\nGLIDEPATH_CONFIG=config.yaml\n');
    const { code, stderr } = await start(dir);
    expect(code).toBe(1);
    expect(stderr).toContain('REDIS_URL: must be a Redis URL such as redis://host:6379');
  });

  it('starts without a .env too, and says what is missing', async () => {
    const { code, stderr } = await start(tempDir());
    expect(code).toBe(1);
    expect(stderr).toContain('GLIDEPATH_CONFIG: set it to the path of the YAML config');
  });
});

describe('settings that name the fix', () => {
  it('REDIS_URL without a scheme shows the expected form', () => {
    expect(problems({ REDIS_URL: '127.0.0.1:6379' })).toEqual(['REDIS_URL: must be a Redis URL such as redis://host:6379 (or rediss:// for TLS, redis://:password@host:6379/0)']);
    expect(problems({ REDIS_URL: 'redis://:secret@redis.internal:6380/2' })).toEqual([]);
    expect(problems({ REDIS_URL: 'rediss://redis.internal:6380' })).toEqual([]);
  });

  it('refuses two clusters with the same ingest token, naming both', () => {
    expect(problems({ INGEST_TOKENS: 'prod=same-token-0123456789abcdef,dev=same-token-0123456789abcdef' })).toEqual([
      'INGEST_TOKENS: clusters "prod" and "dev" have the same token; give each cluster its own',
    ]);
  });

  it('refuses a short API_READ_TOKEN or METRICS_TOKEN', () => {
    expect(problems({ API_READ_TOKEN: 'x' })).toEqual(['API_READ_TOKEN: API_READ_TOKEN must be at least 16 characters (or unset)']);
    expect(problems({ METRICS_TOKEN: 'short' })).toEqual(['METRICS_TOKEN: METRICS_TOKEN must be at least 16 characters (or unset)']);
    expect(problems({ API_READ_TOKEN: '', METRICS_TOKEN: '' })).toEqual([]);
  });

  it('a YAML syntax error shows the offending line', () => {
    let error: unknown;
    try {
      parseConfigFile('clusters:\n  - name: prod\n   inCluster: true\npipelines: []\n');
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).problems[0]).toBe('YAML: Sequence item without - indicator at line 3, column 1: "   inCluster: true"');
  });

  it('main prints the YAML problem with its line, no stack', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.yaml'), 'clusters: [\n  - name: prod\n');
    const env = { ...cleanEnv(), GLIDEPATH_CONFIG: join(dir, 'config.yaml') };
    const result = await promisify(execFile)(process.execPath, ['--import', tsxLoader, mainTs], { env }).catch((e: { code: number; stderr: string }) => e);
    expect((result as { code?: number }).code).toBe(1);
    expect(result.stderr).toContain('YAML: Block collections are not allowed within flow collections at line 2, column 3: "  - name: prod"');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
