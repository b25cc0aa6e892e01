/** `npm run sandbox` (the README's first command) shows a release thread and an approval, end to end. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../sandbox/main.ts', import.meta.url));

describe('npm run sandbox', () => {
  it('runs the clusters, Glidepath and the Slack stand-in, and prints the release thread a person would read', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...process.env, SANDBOX_SECONDS: '20', PORT: '0', SANDBOX_DIR: mkdtempSync(join(tmpdir(), 'gp-sandbox-')), LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toContain('Release rel-1.29.0 — checkout');
    expect(out).toMatch(/is paused \(step 2\/6, weight 20%\) and waits for approval/);
    expect(out).toContain('[ Approve ] [ Abort ]');
    expect(out).toMatch(/→ you click Approve on \S+\/shop\/checkout-/);
    // The click went through Slack → Bolt → the cluster, and the thread says who approved.
    expect(out).toMatch(/approved step 2 of \S+\/shop\/checkout-\S+: the canary moves on/);
    expect(out).not.toContain('still paused: resumed');
    expect(out).not.toMatch(/<!channel>|Error:/);
  }, 90_000);
});
