/**
 * KubeApi.listPages against an API server whose `continue` never ends (issue 20): memory is one
 * page either way, but such a list would never reach its watch. It is given up after
 * MAX_LIST_PAGES pages with a `malformed` error, which the watch loop backs off from.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LIST_PAGES } from '../../src/kube/api.js';
import { KubeActionError } from '../../src/kube/errors.js';
import { ROLLOUTS } from '../../src/kube/resources.js';
import { startKubeWorld, type KubeWorld } from './support.js';

let world: KubeWorld;
beforeEach(async () => {
  world = await startKubeWorld();
});
afterEach(async () => {
  world.server.hostile = undefined;
  await world.close();
});

describe('listPages against a list that never ends', () => {
  it(`gives up after ${MAX_LIST_PAGES} pages with a malformed error naming the cluster`, async () => {
    let served = 0;
    world.server.hostile = (r, { res, watch }) => {
      if (watch || r.verb !== 'list' || r.resource !== 'rollouts') return false;
      served++;
      const body = JSON.stringify({ apiVersion: 'argoproj.io/v1alpha1', kind: 'RolloutList', metadata: { resourceVersion: '1', continue: `page-${served}` }, items: [] });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
      return true;
    };
    let pages = 0;
    const err = await (async () => {
      for await (const _page of world.clusters.api('prod').listPages(ROLLOUTS, 'shop')) pages++;
    })().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(KubeActionError);
    expect((err as KubeActionError).kind).toBe('malformed');
    expect((err as KubeActionError).message).toMatch(/Cluster prod answered a list of rollouts in shop with more than \d+ pages/);
    expect(pages).toBe(MAX_LIST_PAGES);
    expect(served).toBe(MAX_LIST_PAGES);
  }, 60_000);
});
