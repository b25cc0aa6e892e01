/**
 * ListWatch against a hostile API server (issue 20): the real stand-in over HTTPS, real
 * client-node, with the stand-in's `hostile` hook answering some requests itself. A 410 on every
 * resume, a 429 with Retry-After, 5xx: the loop waits, more each time; a server that ignores
 * labelSelector: only what the scope selects is delivered, a page at a time, and the event loop
 * keeps turning. Timing bounds are generous: they only catch a busy loop or a synchronous pass.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ListWatch, type ListWatchEvents, type ListWatchOptions, type RefusalReason } from '../../src/facts/watch/list-watch.js';
import { ROLLOUTS } from '../../src/kube/resources.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { waitFor } from '../helpers/wait.js';
import { startKubeWorld, type KubeWorld } from '../kube/support.js';

const SELECTED = { 'app.kubernetes.io/part-of': 'checkout', env: 'prod' };
const SELECTOR = 'app.kubernetes.io/part-of=checkout,env=prod';
const scope = { cluster: 'prod', resource: ROLLOUTS, namespace: 'shop', labelSelector: SELECTOR };
/** Small, so the test is quick: a 410 loop reaches the ceiling within seconds. */
const FAST: ListWatchOptions = { initialBackoffMs: 200, maxBackoffMs: 4_000 };

const rollout = (name: string, labels: Record<string, string>, namespace = 'shop'): KubeObject => rolloutManifest({ namespace, name, image: `registry.example.com/shop/${name}:1.0.0`, labels });

let world: KubeWorld | undefined;
let watches: ListWatch[] = [];

afterEach(async () => {
  await Promise.all(watches.map((w) => w.stop()));
  watches = [];
  await world?.close();
  world = undefined;
});

/** What a ListWatch told its caller. */
function recorder() {
  const delivered: string[] = [];
  const refused: { reason: RefusalReason; how: string }[] = [];
  const summaries: { counts: Partial<Record<RefusalReason, number>>; how: string }[] = [];
  const backoffs: { ms: number; reason: string }[] = [];
  const events: ListWatchEvents = {
    onObject: (o, how) => void delivered.push(`${how} ${(o as KubeObject).metadata.name}`),
    onRefused: (reason, how) => void refused.push({ reason, how }),
    onRefusedSummary: (counts, how) => void summaries.push({ counts, how }),
    onBackoff: (ms, reason) => void backoffs.push({ ms, reason }),
  };
  return { delivered, refused, summaries, backoffs, events };
}

function start(events: ListWatchEvents, options: ListWatchOptions = FAST): ListWatch {
  const watch = new ListWatch(world!.clusters.api('prod'), scope, events, options).start();
  watches.push(watch);
  return watch;
}

/** Server-side times (ms since the test started) of each `verb resource` request. */
function requestTimes(w: KubeWorld): Map<string, number[]> {
  const t0 = Date.now();
  const times = new Map<string, number[]>();
  w.server.onRequest = (r) => {
    const key = `${r.verb} ${r.resource}`;
    times.set(key, [...(times.get(key) ?? []), Date.now() - t0]);
  };
  return times;
}

function sendStatus(res: ServerResponse, code: number, reason: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `hostile: ${reason}`, reason, code });
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The answer a real API server gives a watch from a compacted version: 200, one ERROR event (410), end. */
function sendExpiredWatch(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (99)', reason: 'Expired', code: 410 } })}\n`);
}

/** A list that ignores labelSelector and limit: pre-serialised pages chained by `continue` (the page number). */
function listPages(w: KubeWorld, pages: KubeObject[][]): string[] {
  const rv = w.store.resourceVersion();
  return pages.map((items, i) => JSON.stringify({ apiVersion: 'argoproj.io/v1alpha1', kind: 'RolloutList', metadata: { resourceVersion: rv, ...(i + 1 < pages.length ? { continue: String(i + 1) } : {}) }, items }));
}

function servePage(res: ServerResponse, url: URL, pages: string[]): number {
  const page = Number(url.searchParams.get('continue') ?? '0');
  const text = pages[page]!;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
  return page;
}

/** The longest gap between the ticks of a 20 ms timer while `run` runs: how long the event loop was blocked. */
async function maxTimerGap<T>(run: () => Promise<T>): Promise<{ result: T; maxGapMs: number; ticks: number }> {
  let last = Date.now();
  let maxGapMs = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const at = Date.now();
    maxGapMs = Math.max(maxGapMs, at - last);
    last = at;
    ticks++;
  }, 20);
  try {
    const result = await run();
    maxGapMs = Math.max(maxGapMs, Date.now() - last);
    return { result, maxGapMs, ticks };
  } finally {
    clearInterval(timer);
  }
}

const measure = (line: string): void => void (process.env.MEASURE && console.log(`[measure] ${line}`));

describe('ListWatch against a hostile API server', () => {
  it('410 on every watch: relists back off, further each time, well under 2 requests a second', async () => {
    world = await startKubeWorld();
    world.store.create(world.store.registry.byKind('Rollout'), 'shop', rollout('checkout', SELECTED));
    const times = requestTimes(world);
    world.server.hostile = (r, { res, watch }) => {
      if (!(watch && r.resource === 'rollouts')) return false;
      sendExpiredWatch(res);
      return true;
    };
    const seen = recorder();
    const startedAt = Date.now();
    start(seen.events);
    await new Promise((r) => setTimeout(r, 8_000));
    await watches[0]!.stop();
    const elapsedS = (Date.now() - startedAt) / 1000;
    const lists = times.get('list rollouts') ?? [];
    const total = lists.length + (times.get('watch rollouts') ?? []).length;
    measure(`410 loop: ${total} LIST+WATCH in ${elapsedS.toFixed(1)} s = ${(total / elapsedS).toFixed(2)}/s; list gaps ${lists.slice(1).map((t, i) => t - lists[i]!).join(',')} ms`);
    expect(total).toBeLessThanOrEqual(2 * elapsedS + 2);
    // It kept trying (the object of every list delivered), and waited longer each time below the ceiling.
    expect(lists.length).toBeGreaterThanOrEqual(4);
    const gaps = lists.slice(1).map((t, i) => t - lists[i]!);
    expect(gaps[0]!).toBeGreaterThanOrEqual(90);
    expect(gaps[3]!).toBeGreaterThan(gaps[0]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(1_000);
    expect(seen.backoffs.every((b) => b.reason === 'expired')).toBe(true);
    expect(seen.delivered.filter((d) => d === 'list checkout').length).toBe(lists.length);
  }, 30_000);

  it('429 with Retry-After: 2 on LIST: the next LIST comes no sooner than the server asked', async () => {
    world = await startKubeWorld();
    world.store.create(world.store.registry.byKind('Rollout'), 'shop', rollout('checkout', SELECTED));
    const times = requestTimes(world);
    let throttled = 0;
    world.server.hostile = (r, { res, watch }) => {
      if (watch || r.resource !== 'rollouts' || throttled > 0) return false;
      throttled++;
      sendStatus(res, 429, 'TooManyRequests', { 'Retry-After': '2' });
      return true;
    };
    const seen = recorder();
    start(seen.events);
    await waitFor(async () => seen.delivered.includes('list checkout'), 'the list after the 429');
    const [first, second] = times.get('list rollouts')!;
    expect(second! - first!).toBeGreaterThanOrEqual(1_500);
    expect(seen.backoffs[0]).toMatchObject({ reason: 'throttled' });
    expect(seen.backoffs[0]!.ms).toBeGreaterThanOrEqual(2_000);
  }, 30_000);

  it('5xx on LIST backs off, and the loop recovers and delivers once the server is good again', async () => {
    world = await startKubeWorld();
    world.store.create(world.store.registry.byKind('Rollout'), 'shop', rollout('checkout', SELECTED));
    const times = requestTimes(world);
    let failing = true;
    world.server.hostile = (r, { res, watch }) => {
      if (!failing || watch || r.resource !== 'rollouts') return false;
      sendStatus(res, 500, 'InternalError');
      return true;
    };
    const seen = recorder();
    start(seen.events);
    await waitFor(async () => (times.get('list rollouts')?.length ?? 0) >= 4 || undefined, 'four failed lists');
    failing = false;
    await waitFor(async () => seen.delivered.includes('list checkout'), 'the list once the server is good');
    const lists = times.get('list rollouts')!;
    const gaps = lists.slice(1).map((t, i) => t - lists[i]!);
    // 100-200 ms, then 200-400, 400-800: never a busy loop.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(90);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(seen.backoffs.slice(0, 3).map((b) => b.reason)).toEqual(['server', 'server', 'server']);
    // And the watch goes on from the list: a change is heard.
    world.store.mutate(world.store.registry.byKind('Rollout'), 'shop', 'checkout', (o) => void (o.metadata.annotations = { touched: 'yes' }));
    await waitFor(async () => seen.delivered.includes('watch checkout'), 'the watch event');
  }, 30_000);

  it('a list that ignores labelSelector: only the selected object is delivered, page by page, the loop turning', async () => {
    world = await startKubeWorld();
    const w = world;
    // 10 pages of 500 strangers: other labels, or the right labels in another namespace; one selected object in page 7.
    const pages = Array.from({ length: 10 }, (_, p) => Array.from({ length: 500 }, (_, i) => (p === 3 && i < 10 ? rollout(`elsewhere-${i}`, SELECTED, 'argocd') : rollout(`stranger-${p}-${i}`, { 'app.kubernetes.io/part-of': 'other', env: 'prod' }))));
    pages[7]!.splice(250, 0, rollout('checkout', SELECTED));
    const bodies = listPages(w, pages);
    const seen = recorder();
    /** Objects refused by the client when the server got the request for each page. */
    const refusedAtRequest: number[] = [];
    let afterPages = 0;
    w.server.hostile = (r, { res, url, watch }) => {
      if (watch || r.resource !== 'rollouts') return false;
      refusedAtRequest[Number(url.searchParams.get('continue') ?? '0')] = seen.refused.length;
      servePage(res, url, bodies);
      return true;
    };
    const { maxGapMs, ticks } = await maxTimerGap(async () => {
      start(seen.events, { ...FAST, afterPage: () => void afterPages++ });
      await waitFor(async () => seen.summaries.length > 0 || undefined, 'the list');
    });
    measure(`5,000 unselected over 10 pages: max event-loop gap ${maxGapMs} ms, ${ticks} ticks`);
    expect(seen.delivered).toEqual(['list checkout']);
    expect(seen.refused.length).toBe(5_000);
    // One summary for the whole list (one log line), not one per object.
    expect(seen.summaries).toEqual([{ counts: { outside_selector: 4_990, outside_namespace: 10 }, how: 'list' }]);
    // Each page was processed before the next was asked for (a gathered list would have refused none yet).
    expect(refusedAtRequest).toEqual(pages.map((_, p) => p * 500));
    expect(afterPages).toBe(10);
    expect(maxGapMs).toBeLessThan(1_000);
  }, 30_000);

  it('a watch stream that sends objects outside the scope: only the selected one is delivered', async () => {
    world = await startKubeWorld();
    const w = world;
    const seen = recorder();
    w.server.hostile = (r, { res, watch }) => {
      if (!watch || r.resource !== 'rollouts') return false;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const rv = w.store.resourceVersion();
      for (const object of [rollout('stranger', { 'app.kubernetes.io/part-of': 'other' }), rollout('elsewhere', SELECTED, 'argocd'), rollout('checkout', SELECTED)]) {
        res.write(`${JSON.stringify({ type: 'ADDED', object: { ...object, metadata: { ...object.metadata, resourceVersion: rv } } })}\n`);
      }
      // Held open, as a watch is, until the client stops it.
      return true;
    };
    start(seen.events);
    await waitFor(async () => seen.delivered.includes('watch checkout'), 'the selected object');
    expect(seen.delivered).toEqual(['watch checkout']);
    expect(seen.refused).toEqual([
      { reason: 'outside_selector', how: 'watch' },
      { reason: 'outside_namespace', how: 'watch' },
    ]);
    await watches[0]!.stop();
    // Told once, when the watch ended.
    expect(seen.summaries).toEqual([{ counts: { outside_selector: 1, outside_namespace: 1 }, how: 'watch' }]);
  }, 30_000);

  it('deletions found on a relist are judged across all its pages; a DELETED of an object never held is dropped', async () => {
    world = await startKubeWorld();
    const w = world;
    const selected = (name: string) => rollout(name, SELECTED);
    const first = listPages(w, [[selected('a'), selected('b')], [selected('c')]]);
    const second = listPages(w, [[selected('a')], [selected('c')]]);
    let lists = 0;
    let watchesServed = 0;
    w.server.hostile = (r, { res, url, watch }) => {
      if (r.resource !== 'rollouts') return false;
      if (!watch) {
        if (!url.searchParams.get('continue')) lists++;
        servePage(res, url, lists === 1 ? first : second);
        return true;
      }
      watchesServed++;
      if (watchesServed === 1) {
        // A stranger's DELETED (never listed) must not become a removal; then the version is gone.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'DELETED', object: rollout('stranger', SELECTED) })}\n`);
        res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 } })}\n`);
        return true;
      }
      return false;
    };
    const seen = recorder();
    const deleted: string[] = [];
    start({ ...seen.events, onDeleted: (o, how) => void deleted.push(`${how} ${(o as KubeObject).metadata.name}`) });
    await waitFor(async () => lists >= 2 && seen.delivered.filter((d) => d === 'list c').length === 2 || undefined, 'the relist');
    await waitFor(async () => deleted.length > 0 || undefined, 'the removal');
    expect(deleted).toEqual(['relist b']);
    expect(seen.delivered).toEqual(['list a', 'list b', 'list c', 'list a', 'list c']);
  }, 30_000);
});
