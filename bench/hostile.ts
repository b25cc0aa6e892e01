/**
 * bench:hostile — issue 20's cluster-side attacks (test/helpers/hostile-attacks.ts) against a
 * Glidepath in its own process (every role, `facts: watch`, --max-old-space-size 256) watching the
 * stand-in API server, each after a baseline of the same moves with a well-behaved server, in the
 * same run and the same process, so the ratios hold on any machine. Per run: peak RSS (VmRSS
 * sampled every 100 ms through the attack and the recovery), /healthz p50/p99 meanwhile, LIST+WATCH
 * requests per second at the API server, and whether the next good event reached Slack.
 * A child killed by an attack is started again before the next run (`restartedBefore`).
 * The last line is one JSON object. Knob: HOSTILE_HEAP_MB (default 256).
 */
import { ATTACKS, abortReplyArrives, playAttack, wellBehaved, type AttackReport } from '../test/helpers/hostile-attacks.js';
import { startHostileWorld } from '../test/helpers/hostile-world.js';
import { loadavg } from 'node:os';

const HEAP_MB = Number(process.env.HOSTILE_HEAP_MB ?? 256);
const log = (line: string) => console.log(line);
const ratio = (x: number, base: number) => Math.round((x / Math.max(base, 0.001)) * 10) / 10;

function line(r: AttackReport): string {
  const fate = r.alive ? 'alive' : `DEAD (${r.exit})`;
  return (
    `  ${r.name.padEnd(58)} ${fate.padEnd(8)} rss ${String(r.peakRssMb).padStart(6)} MiB  healthz p50 ${String(r.healthzP50Ms).padStart(7)} ms p99 ${String(r.healthzP99Ms).padStart(7)} ms` +
    ` (${r.healthzFailures} failed)  ${String(r.requestsPerSec).padStart(7)} list+watch/s  next event ${r.nextEventInSlack ? `in Slack after ${r.nextEventMs} ms` : 'NOT in Slack'}`
  );
}

async function main(): Promise<void> {
  log(`bench:hostile: a Glidepath child with a ${HEAP_MB} MiB heap; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const world = await startHostileWorld({ maxOldSpaceMb: HEAP_MB, logLevel: 'error' });
  const results: { attack: string; baseline: AttackReport; hostile: AttackReport; vsBaseline: Record<string, number> }[] = [];
  try {
    await world.deploy('1.0.0');
    if (!(await world.reachesSlack('1.0.0', 60_000))) throw new Error('the first release never reached Slack: the world is broken, not the bot');
    let n = 0;
    for (const attack of ATTACKS) {
      // A new version between runs: each run's "next good event" is its own.
      const baseline = await playAttack(world, wellBehaved(attack.id), `3.${++n}.0`, attack.id === 'd' ? { before: abortReplyArrives(world) } : {});
      const hostile = await playAttack(world, attack, `3.${++n}.0`, attack.id === 'd' ? { before: abortReplyArrives(world) } : {});
      const vsBaseline = {
        peakRss: ratio(hostile.peakRssMb, baseline.peakRssMb),
        healthzP50: ratio(hostile.healthzP50Ms, baseline.healthzP50Ms),
        healthzP99: ratio(hostile.healthzP99Ms, baseline.healthzP99Ms),
        requestsPerSec: ratio(hostile.requestsPerSec, baseline.requestsPerSec),
      };
      log(`(${attack.id}) ${attack.name}`);
      log(line(baseline));
      log(line(hostile));
      log(`  vs baseline: rss ×${vsBaseline.peakRss}, healthz p50 ×${vsBaseline.healthzP50}, p99 ×${vsBaseline.healthzP99}, list+watch/s ×${vsBaseline.requestsPerSec}; detail ${JSON.stringify(hostile.detail)}`);
      results.push({ attack: attack.id, baseline, hostile, vsBaseline });
    }
  } finally {
    await world.close();
  }
  log(JSON.stringify({ bench: 'hostile', heapMb: HEAP_MB, restarts: world.restarts, loadavg: loadavg(), results }));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
