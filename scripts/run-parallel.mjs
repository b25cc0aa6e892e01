#!/usr/bin/env node
/**
 * Runs npm scripts at the same time and fails if any fails: `npm test` type-checks and lints side
 * by side (each is one single-threaded process, and the machine has two cores), then runs the
 * tests. `--live NAME` streams that script's output as it comes; every other script's output is
 * printed whole when it ends, so nothing interleaves line by line.
 *
 * The tests themselves do not run beside the checks: tried, the suite took as long (the checks
 * took 57-78 s instead of 26-35 s) and three load-sensitive tests failed in one run.
 *
 *   node scripts/run-parallel.mjs typecheck lint
 */
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const liveAt = args.indexOf('--live');
const live = liveAt >= 0 ? args[liveAt + 1] : undefined;
const names = args.filter((_, i) => liveAt < 0 || (i !== liveAt && i !== liveAt + 1));
if ((names.length === 0 && live === undefined) || (liveAt >= 0 && live === undefined)) {
  console.error('usage: node scripts/run-parallel.mjs [--live <npm script>] <npm script>…');
  process.exit(2);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function report(r) {
  if (r.out.trim()) process.stdout.write(`── ${r.name} ──\n${r.out.trimEnd()}\n`);
  console.log(`${r.name}: ${r.code === 0 ? 'ok' : `failed (exit ${r.code})`} in ${r.seconds.toFixed(1)} s`);
}

function run(name, streamed) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', name], { stdio: ['ignore', streamed ? 'inherit' : 'pipe', streamed ? 'inherit' : 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.once('error', (err) => resolve({ name, code: 1, out: String(err), seconds: 0 }));
    child.once('close', (code, signal) => {
      const r = { name, code: code ?? (signal ? 1 : 0), out, seconds: (Date.now() - started) / 1000 };
      // A buffered script reports as soon as it ends, so a type error shows while the tests still run.
      if (!streamed) report(r);
      resolve(r);
    });
  });
}

const results = await Promise.all([...(live ? [run(live, true)] : []), ...names.map((n) => run(n, false))]);
if (live) console.log(`${live}: ${results[0].code === 0 ? 'ok' : `failed (exit ${results[0].code})`} in ${results[0].seconds.toFixed(1)} s`);
const failed = results.filter((r) => r.code !== 0).map((r) => r.name);
if (failed.length > 0) console.log(`failed: ${failed.join(', ')}`);
process.exit(failed.length > 0 ? 1 : 0);
