/**
 * The image runs Glidepath with the node flags `npm start` gives it, which are what bench:ingest
 * measures (bench/lib/processes.ts startNodeFlags): the young generation's size and how many
 * threads help the collector, which V8 and node set only when the process starts
 * (src/wiring/garbage-collection.ts).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startNodeFlags } from '../../bench/lib/processes.js';

const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
/** Enough short-lived garbage for V8 to grow the young generation as far as it may, in many young collections. */
const CHURN = `let keep = []; for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = []; }`;

describe('node flags', () => {
  it("the image's CMD runs node with npm start's flags", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(cmd, 'the Dockerfile has an exec-form CMD').toBeDefined();
    const [node, ...rest] = JSON.parse(cmd as string) as string[];
    expect(node).toBe('node');
    expect(rest.filter((w) => w.startsWith('--'))).toEqual(startNodeFlags());
    expect(rest.at(-1)).toBe('dist/src/main.js');
  });

  it('a process started with them grows its young generation to 16 MB at most (V8’s own: 32 MB)', () => {
    const churn = `${CHURN}
      process.stdout.write(String(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
    const youngMb = (flags: string[]) => Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' })) / 1_048_576;
    expect(youngMb(startNodeFlags())).toBeLessThanOrEqual(16);
    // The same churn without the flags grows past it: the flag, not the churn, holds it there.
    expect(youngMb([])).toBeGreaterThan(16);
  });

  it("a process started with them gives the collector's work to one helper thread at most (node's own: four)", () => {
    // Young collections in a loop, then each thread's time on a core (/proc/self/task/*/schedstat,
    // nanoseconds): how many threads besides the main one worked more than 2 ms (node's other
    // threads, its signal watcher and the like, run well under a millisecond).
    const churn = `${CHURN}
      const fs = require('node:fs');
      const helpers = fs.readdirSync('/proc/self/task').filter((t) => t !== String(process.pid) && Number(fs.readFileSync('/proc/self/task/' + t + '/schedstat', 'utf8').split(' ')[0]) > 2e6);
      process.stdout.write(String(helpers.length));`;
    const busyHelpers = (flags: string[]) => Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' }));
    expect(busyHelpers(startNodeFlags())).toBeLessThanOrEqual(1);
    // Without the flags the same collections run on several helpers at once.
    expect(busyHelpers([])).toBeGreaterThan(1);
  });
});
