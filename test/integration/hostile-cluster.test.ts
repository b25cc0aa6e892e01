/**
 * Issue 20, "Done when": a Glidepath in its own process (every role, a 256 MiB heap, `facts:
 * watch`) watches a stand-in cluster that turns hostile, one attack at a time (hostile-attacks.ts:
 * an endless watch line, 410 on every watch, a LIST that ignores labelSelector, a 40 KB abort
 * message, a Secret on the Rollouts watch). After each, from outside: the process is alive,
 * /healthz answers (5 s hang guard; latencies are printed, not asserted), its RSS stayed under
 * 512 MiB, and the next good event (a new version of the Rollout in the store) reaches the Slack
 * thread. A child killed by one attack is started again before the next, so each is judged alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortReplyArrives, ATTACKS, playAttack, SECRET_NAME, SECRET_VALUE, type AttackReport } from '../helpers/hostile-attacks.js';
import { startHostileWorld, type HostileWorld } from '../helpers/hostile-world.js';

const RSS_LIMIT_MB = 512;
const attack = (id: string) => ATTACKS.find((a) => a.id === id)!;

describe('a hostile cluster, seen from outside the Glidepath process', () => {
  let world: HostileWorld;
  const reports: AttackReport[] = [];

  beforeAll(async () => {
    world = await startHostileWorld({ maxOldSpaceMb: 256 });
    await world.deploy('1.0.0');
    // The world works before any attack: otherwise every failure below would mean nothing.
    expect(await world.reachesSlack('1.0.0', 60_000)).toBe(true);
  }, 120_000);

  afterAll(async () => {
    // The measures, for the coordinator's report (timings are the machine's, not asserted).
    for (const r of reports) console.log(`hostile-cluster ${JSON.stringify(r)}`);
    await world?.close();
  }, 30_000);

  /** What must hold after every attack, in one object so a failure shows all of it. */
  // `healthzHung`: polls during the attack that hit the 5 s hang guard (an event loop held that long).
  const survived = (r: AttackReport) => ({ alive: r.alive, healthz: r.healthz, healthzHung: r.healthzFailures, rssUnderLimit: r.peakRssMb < RSS_LIMIT_MB, nextEventInSlack: r.nextEventInSlack });
  const ok = { alive: true, healthz: 200, healthzHung: 0, rssUnderLimit: true, nextEventInSlack: true };
  const play = async (id: string, version: string, before?: () => Promise<Record<string, unknown>>) => {
    const report = await playAttack(world, attack(id), version, before ? { before } : {});
    reports.push(report);
    return report;
  };

  it('(a) a watch that sends 72 MiB without a newline: cut, and the watch resumes', async () => {
    const r = await play('a', '2.0.1');
    expect(r.detail.resumed).toBe(true);
    expect(survived(r)).toEqual(ok);
    // Cut: the client hung up on the line (a line cap) before the 72 MiB were all sent.
    expect(r.detail.clientClosed).toBe(true);
  }, 120_000);

  it('(b) 410 on every watch for 15 s: it backs off (under 2 LIST+WATCH a second) and recovers', async () => {
    const r = await play('b', '2.0.2');
    expect(survived(r)).toEqual(ok);
    expect(r.requestsPerSec).toBeLessThan(2);
    // It did try again through the storm (a rate of 0 would pass the line above too).
    expect(r.detail.refusedWatches).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('(c) a LIST that ignores labelSelector (20,000 unselected Rollouts): the selector is checked again, the selected one still counts', async () => {
    const r = await play('c', '2.0.3');
    expect(r.detail.listed).toBe(true);
    expect(survived(r)).toEqual(ok);
    // None of the unselected objects became a thread.
    expect(world.slackText()).not.toContain('noise-');
  }, 120_000);

  it('(d) an abort with a 40 KB status.message: the thread still says it was aborted (the message cut, not the reply dropped)', async () => {
    const r = await play('d', '2.0.4', abortReplyArrives(world));
    expect(survived(r)).toEqual(ok);
    expect(r.detail.abortInSlack).toBe(true);
  }, 120_000);

  it('(e) a Secret on the Rollouts watch: refused by kind, nothing of it in Slack', async () => {
    const r = await play('e', '2.0.5');
    expect(r.detail.served).toBe(true);
    // Read and refused, not merely sent: the refusal was counted.
    expect(r.detail.refused).toBe(true);
    expect(survived(r)).toEqual(ok);
    expect(world.slackText()).not.toContain(SECRET_VALUE);
    expect(world.slackText()).not.toContain(SECRET_NAME);
  }, 120_000);
});
