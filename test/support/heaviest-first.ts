/**
 * Test files in the order that keeps both workers busy to the end: the longest first. Vitest
 * orders by the durations it cached from the last run, and on a fresh clone (CI's case: no cache)
 * by file size, which put a 50 s file last and left one worker idle for most of it. A file's
 * cached duration wins; without one, the figure measured here stands in; files not listed run
 * after the listed ones, in the order vitest would give them.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per file in a full `npm test` on the 2-core machine (2026-12-02, 2 workers), the files over 4 s. */
const MEASURED_SECONDS: Record<string, number> = {
  'test/integration/hostile-cluster.test.ts': 58,
  'test/sandbox/sandbox-main.test.ts': 44,
  'test/sandbox/browser-story.test.ts': 33,
  'test/integration/bounded-keys.test.ts': 33,
  'test/slack/e2e.test.ts': 29,
  'test/slack/writer.test.ts': 18,
  'test/cli/check.test.ts': 14,
  'test/integration/zombie-fence.test.ts': 13,
  'test/integration/writer-zombie.test.ts': 13,
  'test/facts/list-watch-hostile.test.ts': 13,
  'test/integration/roles.test.ts': 13,
  'test/integration/worker-crash.test.ts': 10,
  'test/sandbox/sandbox-signals.test.ts': 10,
  'test/sandbox/browser.test.ts': 9,
  'test/kube/prune-notified.test.ts': 9,
  'test/releases/record-codec.test.ts': 8,
  'test/integration/kargo-thread.test.ts': 8,
  'test/releases/reducer-properties.test.ts': 7,
  'test/releases/appset-steps.test.ts': 7,
  'test/config/startup.test.ts': 6,
  'test/integration/shutdown.test.ts': 6,
  'test/integration/appset-own-revisions.test.ts': 6,
  'test/integration/pipeline-templates-roles.test.ts': 6,
  'test/http/slack-bounds.test.ts': 6,
  'test/integration/pipeline-templates.test.ts': 6,
  'test/config/startup-reach.test.ts': 6,
  'test/releases/appset-membership.test.ts': 5,
  'test/slack/socket-mode.test.ts': 5,
  'test/commands/appset-refresh-rounds.test.ts': 5,
  'test/slack/writer-locks.test.ts': 5,
  'test/commands/appset-actions.test.ts': 5,
  'test/kube/freshness.test.ts': 5,
  'test/slack/writer-faults.test.ts': 5,
  'test/sandbox/kubectl.test.ts': 4,
  'test/integration/cluster.test.ts': 4,
  'test/facts/watch-source.test.ts': 4,
};

export class HeaviestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const expectedMs = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return cached ?? (MEASURED_SECONDS[file] ?? 0) * 1000;
    };
    const weights = new Map(base.map((spec) => [spec, expectedMs(spec)]));
    // A stable sort: equal weights (the unlisted, uncached files) keep the base order.
    return [...base].sort((a, b) => weights.get(b)! - weights.get(a)!);
  }
}
