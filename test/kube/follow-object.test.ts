/**
 * followObject (src/kube/follow-object.ts), the one watch-until-final loop behind followPromotion
 * and followPromotionRequest, at its edges: a watch the server ends is resumed from the last
 * version seen (nothing written meanwhile is missed), a deletion ends it with not-found, and the
 * timeout gives the last state seen.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { followObject } from '../../src/kube/follow-object.js';
import { KubeActionError } from '../../src/kube/errors.js';
import { STAGES } from '../../src/kube/resources.js';
import { stageSchema } from '../../src/model/kargo-stage.js';
import { kargoObjects } from '../helpers/kargo-objects.js';
import { waitFor } from '../helpers/wait.js';
import { startKubeWorld, type KubeWorld } from './support.js';

const NS = 'kargo-demo';
const NAME = 'dev';
let world: KubeWorld;

const rt = () => world.store.registry.byKind('Stage', 'kargo.akuity.io');
/** The state followed here: the Stage's health (any field read from an object would do). */
const setHealth = (status: string): void => void world.store.patch(rt(), NS, NAME, 'merge', { status: { health: { status } } }, { subresource: 'status' });
const watches = (): number => world.server.requestCounts.get('watch stages') ?? 0;

function follow(timeoutMs: number, heard: string[]) {
  return followObject(world.clusters.api('prod'), {
    resource: STAGES,
    schema: stageSchema,
    namespace: NS,
    name: NAME,
    read: (s) => s.status?.health?.status ?? undefined,
    isFinal: (health) => health === 'Healthy' || health === 'Unhealthy',
    deletedMessage: `Stage ${NAME} was deleted`,
    timeoutMs,
    onChange: (health) => heard.push(health),
  });
}

beforeEach(async () => {
  world = await startKubeWorld();
  kargoObjects(world.store, NS).stage(NAME, { direct: true });
  setHealth('Unknown');
});
afterEach(() => world.close());

/** A follow under way that has heard the Stage go Progressing on its first watch. */
async function followingProgressing() {
  const heard: string[] = [];
  const following = follow(60_000, heard);
  await waitFor(async () => watches() === 1, 'the first watch');
  setHealth('Progressing');
  await waitFor(async () => heard.includes('Progressing'), 'Progressing heard');
  return { heard, following };
}

describe('followObject', () => {
  it('resumes a watch the server ended from the last version seen, missing nothing written meanwhile, until a final state', async () => {
    const { heard, following } = await followingProgressing();
    world.server.dropWatches();
    // Written before the watch is started again: heard through the resumed watch.
    setHealth('Healthy');
    const result = await following;
    expect(result).toMatchObject({ state: 'Healthy', timedOut: false, object: { metadata: { name: NAME }, status: { health: { status: 'Healthy' } } } });
    expect(heard).toEqual(['Unknown', 'Progressing', 'Healthy']);
    expect(watches()).toBe(2);
  });

  it('when the version to resume from is gone (410 after compaction), reads the object again and follows on from there', async () => {
    const { heard, following } = await followingProgressing();
    // Written while no watch runs, then the history is compacted: resuming from the last version seen answers 410.
    world.server.dropWatches();
    setHealth('Unknown');
    world.store.compact();
    // The resumed watch is refused (410); the object read again afterwards says Unknown. Wait for
    // that read itself, not just the refused watch: written earlier, Healthy would be read instead.
    await waitFor(async () => heard.length === 3, 'the object read again after the 410');
    expect(watches()).toBeGreaterThanOrEqual(2);
    setHealth('Healthy');
    expect(await following).toMatchObject({ state: 'Healthy', timedOut: false });
    expect(heard).toEqual(['Unknown', 'Progressing', 'Unknown', 'Healthy']);
  });

  it('ends with not-found when the object is deleted before a final state', async () => {
    const following = follow(60_000, []);
    await waitFor(async () => watches() === 1, 'the watch');
    world.store.delete(rt(), NS, NAME);
    const err = await following.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(KubeActionError);
    expect((err as KubeActionError).kind).toBe('not-found');
    expect((err as KubeActionError).message).toBe(`Stage ${NAME} was deleted`);
  });

  it('at the timeout gives the last state seen; an object already final is not watched', async () => {
    expect(await follow(50, [])).toMatchObject({ state: 'Unknown', timedOut: true });
    // The timed-out follow's watch may still be on its way (it is stopped once it is answered):
    // counted first, so the count below says the second follow sent none.
    await waitFor(async () => watches() === 1, 'the first follow\'s watch');
    setHealth('Unhealthy');
    const heard: string[] = [];
    expect(await follow(60_000, heard)).toMatchObject({ state: 'Unhealthy', timedOut: false });
    expect(heard).toEqual(['Unhealthy']);
    expect(watches()).toBe(1);
  });
});
