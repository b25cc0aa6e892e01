/**
 * The image runs Glidepath with the node flags `npm start` gives it, which are what bench:ingest
 * measures (bench/lib/processes.ts startNodeFlags): the young generation's size is one of them,
 * and V8 reads it only when the process starts (src/wiring/garbage-collection.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startNodeFlags } from '../../bench/lib/processes.js';

const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

describe('node flags', () => {
  it("the image's CMD runs node with npm start's flags", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(cmd, 'the Dockerfile has an exec-form CMD').toBeDefined();
    const [node, ...rest] = JSON.parse(cmd as string) as string[];
    expect(node).toBe('node');
    expect(rest.filter((w) => w.startsWith('--'))).toEqual(startNodeFlags());
    expect(rest.at(-1)).toBe('dist/src/main.js');
  });

  it('npm start sizes the young generation (16 MB: half of V8’s own)', () => {
    expect(startNodeFlags()).toContain('--max-semi-space-size=8');
  });
});
