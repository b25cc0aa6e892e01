/**
 * `npm run sandbox` (the README's first command) plays its story end to end: each milestone is
 * printed in plain words and names the release it belongs to, and so does every thread block.
 */
import { redisClient } from '../helpers/slack-harness.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandboxProcess } from '../helpers/sandbox-process.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../sandbox/main.ts', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the sandbox; once every `stopAt` pattern is in its output, Ctrl-C. */
function sandbox(args: string[], env: Record<string, string>, stopAt: RegExp[] = []): Promise<{ code: number | null; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gp-sandbox-'));
  dirs.push(dir);
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, PORT: '0', SANDBOX_DIR: dir, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let interrupted = false;
  const read = (d: Buffer) => {
    out += d.toString();
    // Ctrl-C once the story is told: the sandbox stops cleanly. Once: a second Ctrl-C during the
    // clean-up would stop it hard, as it does for a person.
    if (!interrupted && stopAt.length > 0 && stopAt.every((p) => p.test(out)) && child.exitCode === null) {
      interrupted = true;
      child.kill('SIGINT');
    }
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('npm run sandbox', () => {
  it('tells the story: settle, release with approvals, the freshness gate, a Kargo promotion, a bad image charted and aborted, a stall and its recovery', async () => {
    // --auto: nobody is at the page, the sandbox decides for you after a while (--seconds alone would too).
    // LOG_LEVEL warn: Glidepath's warnings are part of what is checked (no failed edit of a clicked message).
    // The story can end before every reply of its last releases is in: all of them go to one
    // channel, whose posts Slack lets through at about one a second, so under load rel-1.29.0's
    // timeline has come 7 s after its release completed. Ctrl-C once the story is told and that
    // timeline and the approval line of prod-us are in (without them the sandbox runs on until
    // SANDBOX_SECONDS and the check fails).
    const timeline129 = /rel-1\.29\.0 · checkout — reply:\n {2}↳ 📈 timeline: Release rel-1\.29\.0 · checkout \(the image is in the page\)\n/;
    const approvedInThread = /revision-\S+ · checkout-appset — reply:\n {2}↳ ✅ @sandbox: approved RollingSync step 3 of prod\/argocd\/checkout/;
    const { code, out } = await sandbox(['--speed', '30', '--auto'], { SANDBOX_SECONDS: '240', LOG_LEVEL: 'warn', SANDBOX_AUTO_AFTER: '2' }, [/The end ·/, timeline129, approvedInThread]);
    expect(code, out).toBe(0);
    /** The milestones in this order, each after the one before, from `start`; the offset after the last. */
    const inOrder = (start: number, milestones: RegExp[]): number => {
      let from = start;
      for (const m of milestones) {
        const found = m.exec(out.slice(from));
        // What is missing goes last: CI shows the end of a long message.
        expect(found, `${out}\n--- missing, after offset ${from}: ${m}`).not.toBeNull();
        from += found!.index + found![0].length;
      }
      return from;
    };
    const announced = inOrder(0, [/The sandbox acts for you \(--auto\)/, /✓ rel-1\.28\.0 · Complete in checkout/, /→ rel-1\.29\.0 · CI announced it/]);
    // The canary pauses are approved whenever they come, beside the chapters: under load dev's can
    // come after the freshness gate began. Each of the two goes in its own order.
    inOrder(announced, [
      /rel-1\.29\.0 · checkout — reply:\n {2}↳ ⏸️ +dev — `dev\/shop\/checkout-dev` is paused \(step 2\/6, weight 20%\) and waits for approval\./,
      /… rel-1\.29\.0 · checkout: \S+ waits for approval: .*\(--auto: the sandbox does it for you in 2 story seconds\)/,
      /→ rel-1\.29\.0 · the sandbox clicks Approve for you \(--auto\)/,
      // The sandbox's clicks are its own, never yours.
      /rel-1\.29\.0 · checkout — reply edited:\n {2}↳ .*approved step 2 of \S+\/shop\/checkout-\S+: the canary moves on \(by @sandbox\)/,
    ]);
    // dev sends writes as the person: its API server served the sandbox's approve as sandbox@example.com.
    expect(out).toMatch(/ {2}rel-1\.29\.0 · dev's API server served the approve as sandbox@example\.com, groups sre \(impersonated by glidepath, Glidepath's account\): patch rollouts\S* shop\/checkout-dev/);
    // The approval that went through is in the release thread, not only in the answer. Slack lets
    // #checkout-appset's posts through at about one a second, so its line can come after the story
    // moved on (rel-1.29.0 Complete, the Kargo chapter): it is checked after the click, on its own.
    const refreshApprove = /→ rel-1\.29\.0 · the sandbox clicks Refresh and approve for you \(--auto\)/;
    inOrder(announced, [refreshApprove, approvedInThread]);
    inOrder(announced, [
      /→ rel-1\.29\.0 · the sandbox types for you \(--auto\): \/glidepath approve checkout-appset@prod-us/,
      /✓ rel-1\.29\.0 · the freshness gate refused to approve on stale state/,
      refreshApprove,
      /✓ rel-1\.29\.0 · Complete in checkout/,
      /brave-lynx \(1\.29\.0\) · Glidepath answered the sandbox:\n.*created Promotion .*; followed in the release thread of brave-lynx \(Freight [0-9a-f]{7}\)/,
      /✓ brave-lynx \(1\.29\.0\) · promoted to the dev stage/,
      /✓ rel-1\.30\.0 · dev's analysis is inconclusive/,
      /✓ rel-1\.30\.0 · the analysis chart is in the thread: success-rate Inconclusive — dev\/shop\/checkout-dev/,
      /→ rel-1\.30\.0 · the Abort dialog asks to confirm; the sandbox presses Abort for you \(--auto\)/,
      /✓ rel-1\.30\.0 · Aborted/,
      /✓ rel-1\.30\.1 · stall alert/,
      /✓ rel-1\.30\.1 · heard again/,
    ]);
    // The inconclusive analysis was aborted through Glidepath (its pause reason is no sign of the controller's own abort).
    expect(out).toMatch(/rel-1\.30\.0 · checkout — reply:\n {2}↳ ⛔ dev — `dev\/shop\/checkout-dev` was aborted through Glidepath; traffic went back to the stable version\./);
    expect(out).not.toMatch(/aborted by the Rollouts controller|Aborted by the Rollouts controller/);
    // A file share reads as what it is, by its title, in its release's thread: the bad build's chart, rel-1.29.0's timeline.
    expect(out).toMatch(/rel-1\.30\.0 · checkout — reply:\n {2}↳ 📈 chart: success-rate Inconclusive — dev\/shop\/checkout-dev \(the image is in the page\)\n/);
    expect(out).toMatch(timeline129);
    // Every thread block and every action line names a release, never a pipeline alone; a promotion
    // (prod is watched) shows in its Freight's release thread, never in a thread of its own.
    for (const line of out.split('\n').filter((l) => /^\[\d\d:\d\d:\d\d\] /.test(l))) expect(line).toMatch(/^\[\S+\] (rel-\S+|revision-\S+|ledger-\S+|freight-\S+|brave-lynx) · \S+ — /);
    for (const line of out.split('\n').filter((l) => /^(→|✓|…) /.test(l))) expect(line).toMatch(/^. (rel-|brave-lynx)\S* /);
    // One approval is one change in its thread: no second line repeats it, nothing "not resumed".
    expect(out).not.toMatch(/<@U0SANDBOX>: approved/);
    expect(out).not.toMatch(/by @you|@you:|you click|you type|you press/);
    expect(out).not.toMatch(/could not edit the clicked message|message_not_found/);
    expect(out).not.toMatch(/not resumed|still paused: resumed|<!channel>|Error:/);
    // The banner says which kubeconfig context is whose; a person's default is admin.
    expect(out).toContain('(current context admin@prod)');
    expect(out).toMatch(/dev, prod +Glidepath's own service account/);
    // …and who you are in the cluster, from the config's identity map.
    expect(out).toMatch(/you in the cluster +your clicks on dev are sent as you .*, on prod as Glidepath\n +@you in Slack → Kubernetes user you@example\.com, groups sre\n/);
  }, 300_000);

  it('without --auto holds at the first pause, says so in the terminal and in the page, and Enter in the terminal approves it as you', async () => {
    const { child, dir, output, exited } = startSandboxProcess(['--speed', '10']);
    dirs.push(dir);
    try {
      const rollout = await waitFor(async () => /… rel-1\.29\.0 · checkout: (\S+) waits for approval: the story waits for you\. Click Approve .* in the page, or press Enter here to approve it from here/.exec(output())?.[1], `the first pause's prompt\n${output()}`, 120_000);
      expect(output()).toContain('The story waits for you at each decision');
      // The page says it too, at the top (its state, as the page receives it).
      const page = /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output())![1]!;
      const waiting = ((await (await fetch(`${page}state`)).json()) as { waiting: string[] }).waiting;
      expect(waiting.join('\n')).toContain(`rel-1.29.0 · checkout: ${rollout} waits for approval: click Approve on its reply in the thread of rel-1.29.0 in #checkout-releases, or press Enter in the terminal`);
      // Nobody acted yet: nothing was approved.
      expect(output()).not.toMatch(/approved step 2 of/);
      child.stdin.write('\n');
      await waitFor(async () => new RegExp(`approved step 2 of ${rollout.replace(/[/.]/g, '\\$&')}: the canary moves on \\(by @you\\)`).test(output()), `the approval of ${rollout} by you\n${output()}`, 60_000);
      expect(output()).toContain('→ rel-1.29.0 · you click Approve');
      // On dev your approve reaches the API server as you; prod's writes are Glidepath's own.
      if (rollout.startsWith('dev/')) await waitFor(async () => /rel-1\.29\.0 · dev's API server served the approve as you@example\.com, groups sre/.test(output()), `dev's record of your approve\n${output()}`, 30_000);
      else expect(output()).not.toMatch(/prod's API server served the approve as/);
      expect(output()).not.toMatch(/the sandbox clicks|by @sandbox|--auto: the sandbox does it/);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  }, 180_000);

  it('a busy port stops the start with what to do, and leaves no Redis key behind', async () => {
    const { createServer } = await import('node:net');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      const { code, out } = await sandbox([], { PORT: String(port), SANDBOX_SECONDS: '30' });
      expect(code, out).toBe(1);
      expect(out).toContain(`sandbox: could not start: port ${port} is in use: stop what uses it, or start with PORT=0 to pick a free port`);
      const prefix = /\{glidepath-sandbox-[0-9a-f]+\}/.exec(out)?.[0];
      expect(prefix, out).toBeDefined();
      const redis = redisClient();
      try {
        expect(await redis.keys(`${prefix}*`)).toEqual([]);
      } finally {
        redis.disconnect();
      }
    } finally {
      busy.close();
    }
  }, 60_000);
});
