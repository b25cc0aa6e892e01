import { defineConfig } from 'vitest/config';
import { HeaviestFirst } from './test/support/heaviest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start servers and Redis connections: a process per worker, a few workers.
    pool: 'forks',
    // Three on two cores: much of the suite waits (Retry-After, lock expiry, a 15 s 410 storm, the
    // story's pauses), and a third file fills those waits. Measured on this machine, vitest alone:
    // 263 s with 2 workers, 226 s with 3, every test passing in both.
    maxWorkers: 3,
    // Test files share their worker's module cache instead of a fresh process each: loading
    // client-node, Bolt and BullMQ once per worker, not 130 times, was most of the suite's import
    // time (18 files: 52 s → 18 s). No test mocks modules, fakes timers or stubs globals, and
    // every test builds its own Glidepath, registry and key prefix, so nothing leaks between files.
    isolate: false,
    // The longest files first, on a fresh clone too (test/support/heaviest-first.ts).
    sequence: { sequencer: HeaviestFirst },
    // Only ends a hung test, never a timing assertion: three files share two cores, and a test that
    // starts Glidepath in child processes took over 30 s beside two such files on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
