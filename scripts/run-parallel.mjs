#!/usr/bin/env node
/**
 * Runs npm scripts at the same time and fails if any fails: `npm test` type-checks and lints side
 * by side (each is one single-threaded process, and the machine has two cores), instead of one
 * after the other before the tests start. Each script's output is printed whole when it ends, so
 * the two never interleave line by line.
 *
 *   node scripts/run-parallel.mjs typecheck lint
 */
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/run-parallel.mjs <npm script>…');
  process.exit(2);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(name) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', (err) => resolve({ name, code: 1, out: String(err), seconds: 0 }));
    child.once('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), out, seconds: (Date.now() - started) / 1000 }));
  });
}

const results = await Promise.all(names.map(run));
for (const r of results) {
  if (r.out.trim()) process.stdout.write(`── ${r.name} ──\n${r.out.trimEnd()}\n`);
  console.log(`${r.name}: ${r.code === 0 ? 'ok' : `failed (exit ${r.code})`} in ${r.seconds.toFixed(1)} s`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
