/**
 * KubeApi.watch against a hostile API server (issue 20), over https with the stand-in's CA: a
 * stream of bytes with no newline ends the watch with `line-too-long` without buffering it, a
 * line just under the cap and the good events around garbage are delivered, a 410 ERROR is a
 * KubeActionError with its status, a stream past its byte budget ends as an ordinary end, and
 * 200 watches in a row share a handful of connections with the generated API calls.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { WatchEventType, WatchHandle } from '../../src/kube/api.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { KubeActionError } from '../../src/kube/errors.js';
import { ROLLOUTS } from '../../src/kube/resources.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { startKubeWorld, type KubeWorld } from './support.js';

const MiB = 1024 * 1024;
const LINE_CAP = 1 * MiB;
let world: KubeWorld;

// A forced collection before each sample, so what is measured is what is still held, not garbage.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
function liveBytes(): number {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

beforeEach(async () => {
  world = await startKubeWorld({ watch: { maxLineBytes: LINE_CAP } });
});
afterEach(async () => {
  world.server.hostile = undefined;
  await world.close();
});

const rollouts = () => world.store.registry.byKind('Rollout');

async function watchRollouts(clusters: ClusterClients = world.clusters, afterEach?: (object: any) => void): Promise<{ handle: WatchHandle; events: { type: WatchEventType; object: any }[] }> {
  const events: { type: WatchEventType; object: any }[] = [];
  const handle = await clusters.api('prod').watch(ROLLOUTS, 'shop', { resourceVersion: world.store.resourceVersion() }, (type, object) => {
    events.push({ type, object });
    afterEach?.(object);
  });
  return { handle, events };
}

async function failureOf(done: Promise<void>): Promise<KubeActionError> {
  const err = await done.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof KubeActionError)) throw new Error(`expected the watch to fail with a KubeActionError, it ended with ${String(err)}`);
  return err;
}

/** Answers watches itself with a 200 and lets `write` stream the body; other requests go to the store. */
function hostileWatches(write: (res: ServerResponse) => void): void {
  world.server.hostile = (_request, { res, watch }) => {
    if (!watch) return false;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    write(res);
    return true;
  };
}

const eventLine = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;

describe('KubeApi.watch against a hostile API server', () => {
  it('ends a stream of 64 MiB without a newline with line-too-long, holding nothing like it, and the next watch works', async () => {
    const total = 64 * MiB;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let peakGrowth = 0;
    const baseline = liveBytes();
    hostileWatches((res) => {
      let closed = false;
      res.on('close', () => (closed = true));
      const pump = (): void => {
        while (!closed && written < total) {
          written += chunk.length;
          if (written % MiB === 0) peakGrowth = Math.max(peakGrowth, liveBytes() - baseline);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!closed) res.end();
      };
      pump();
    });
    const { handle } = await watchRollouts();
    const err = await failureOf(handle.done);
    peakGrowth = Math.max(peakGrowth, liveBytes() - baseline);
    expect(err.kind).toBe('line-too-long');
    expect(err.message).toContain(`watch line longer than ${LINE_CAP} bytes`);
    expect(handle.stats().end).toBe('failed');
    // The client hung up: the server stopped well short of the 64 MiB it meant to send.
    expect(written).toBeLessThan(32 * MiB);
    expect(peakGrowth).toBeLessThan(32 * MiB);
    console.log(`no-newline stream: server wrote ${(written / MiB).toFixed(1)} MiB, peak live growth ${(peakGrowth / MiB).toFixed(1)} MiB`);

    world.server.hostile = undefined;
    const next = await watchRollouts();
    world.store.create(rollouts(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'x:1' }));
    await expect.poll(() => next.events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toContain('ADDED checkout');
    next.handle.stop();
    await next.handle.done;
  });

  it('delivers a line just under the cap and the good event after garbage, half JSON, __proto__ lines and a handler that threw, whatever the chunks', async () => {
    const big = { kind: 'Rollout', metadata: { name: 'big', namespace: 'shop', resourceVersion: '7', annotations: { note: '' } } };
    const frame = eventLine('ADDED', big).length - 1;
    // Multi-byte characters (é is 2 bytes, 🚀 is 4) so chunk cuts land inside them.
    const pad = 'é🚀'.repeat(Math.floor((LINE_CAP - frame - 100) / 6));
    big.metadata.annotations.note = pad;
    const bigLine = eventLine('ADDED', big);
    expect(Buffer.byteLength(bigLine) - 1).toBeLessThanOrEqual(LINE_CAP);
    expect(Buffer.byteLength(bigLine) - 1).toBeGreaterThan(LINE_CAP - 200);
    const garbage = ['not json at all\n', '{"type":"ADDED","object":{"metadata":\n', '{"__proto__":{"type":"ADDED","object":{"polluted":true}}}\n', '{"type":"MODIFIED","object":{"__proto__":{"polluted":true},"metadata":{"name":"sly","resourceVersion":"8"}}}\n', '[1,2,3]\n'];
    const good = eventLine('MODIFIED', { kind: 'Rollout', metadata: { name: 'after', namespace: 'shop', resourceVersion: '9' } });
    const body = Buffer.from([bigLine, ...garbage, good].join(''));
    hostileWatches((res) => {
      // Odd-sized writes, so lines and characters are cut everywhere.
      for (let at = 0, size = 1; at < body.length; at += size, size = (size * 7 + 3) % 65_521 || 1) res.write(body.subarray(at, at + size));
      res.end();
    });
    const { handle, events } = await watchRollouts(world.clusters, (object) => {
      if (object.metadata?.name === 'sly') throw new Error('a caller that throws on one event');
    });
    await handle.done;
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED big', 'MODIFIED sly', 'MODIFIED after']);
    expect(events[0]!.object.metadata.annotations.note).toBe(pad);
    // The __proto__ key stayed data on its own object: nothing reached Object.prototype.
    expect(Object.getPrototypeOf(events[1]!.object)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(handle.stats()).toMatchObject({ events: 3, skippedLines: 4, handlerErrors: 1, end: 'server-closed' });
  });

  it('turns an ERROR event (410 after compaction) into a KubeActionError with the status', async () => {
    world.store.create(rollouts(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'x:1' }));
    const old = world.store.resourceVersion();
    world.store.patch(rollouts(), 'shop', 'checkout', 'merge', { metadata: { labels: { moved: 'on' } } }, {});
    world.store.compact();
    const errors: unknown[] = [];
    const handle = await world.clusters.api('prod').watch(ROLLOUTS, 'shop', { resourceVersion: old }, (type, object) => type === 'ERROR' && errors.push(object));
    const err = await failureOf(handle.done);
    expect(err.status).toBe(410);
    expect(errors).toHaveLength(1);
  });

  it('reads a refusal (non-200) as a KubeActionError with its status and the Status message', async () => {
    world.server.hostile = (_request, { res, watch }) => {
      if (!watch) return false;
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '7' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 503, message: 'etcd is having a moment' }));
      return true;
    };
    const { handle } = await watchRollouts();
    const err = await failureOf(handle.done);
    expect({ kind: err.kind, status: err.status }).toEqual({ kind: 'server', status: 503 });
    expect(err.message).toContain('etcd is having a moment');
    // The server's Retry-After reaches the watch loop, as a list's does.
    expect(err.retryAfterMs).toBe(7_000);
  });

  it('ends a stream past its byte budget as an ordinary end, with the lines wholly within it delivered', async () => {
    const budgeted = new ClusterClients([{ name: 'prod', kubeconfigPath: world.kubeconfigPath, kubeconfigContext: 'prod' }], { watch: { maxStreamBytes: 64 * 1024 } });
    try {
      const line = eventLine('MODIFIED', { kind: 'Rollout', metadata: { name: 'chatty', namespace: 'shop', resourceVersion: '5' } });
      hostileWatches((res) => {
        let closed = false;
        res.on('close', () => (closed = true));
        // Far more than the budget, then the server would go on: only the client's end stops it.
        const pump = (): void => {
          while (!closed) if (!res.write(line.repeat(100))) return void res.once('drain', pump);
        };
        pump();
      });
      const { handle, events } = await watchRollouts(budgeted);
      await handle.done;
      expect(handle.stats()).toMatchObject({ end: 'stream-budget-spent', bytesRead: 64 * 1024 });
      expect(events.length).toBe(Math.floor((64 * 1024) / line.length));
    } finally {
      await budgeted.close();
    }
  });

  it('reuses one pool: 200 watches ended by a 410 in a row, with gets and lists between, leave a handful of connections', async () => {
    world.store.create(rollouts(), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'x:1' }));
    world.server.hostile = (_request, { res, watch }) => {
      if (!watch) return false;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(eventLine('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' }));
      return true;
    };
    const api = world.clusters.api('prod');
    // Warm: the pool has its connection before counting starts.
    await api.get(ROLLOUTS, 'shop', 'checkout');
    const acceptedBefore = world.server.connectionsAccepted;
    for (let i = 0; i < 200; i++) {
      const { handle } = await watchRollouts();
      expect((await failureOf(handle.done)).status).toBe(410);
      if (i % 20 === 0) {
        await api.get(ROLLOUTS, 'shop', 'checkout');
        await api.list(ROLLOUTS, 'shop');
      }
    }
    const accepted = world.server.connectionsAccepted - acceptedBefore;
    console.log(`200 watch restarts: ${accepted} connections accepted, ${world.server.openConnections()} open`);
    expect(accepted).toBeLessThanOrEqual(5);
    expect(world.server.openConnections()).toBeLessThanOrEqual(5);
  });

  it('ends a watch that has gone quiet as an ordinary end, not an error', async () => {
    const quick = new ClusterClients([{ name: 'prod', kubeconfigPath: world.kubeconfigPath, kubeconfigContext: 'prod' }], { watch: { quietMs: 200 } });
    try {
      // Headers, one event, then silence with the connection held open.
      hostileWatches((res) => void res.write(eventLine('ADDED', { kind: 'Rollout', metadata: { name: 'once', namespace: 'shop', resourceVersion: '3' } })));
      const { handle, events } = await watchRollouts(quick);
      await handle.done;
      expect(handle.stats().end).toBe('quiet');
      expect(events.map((e) => e.object.metadata.name)).toEqual(['once']);
    } finally {
      await quick.close();
    }
  });

  it('close() ends open watches as stopped and refuses later calls', async () => {
    const clients = new ClusterClients([{ name: 'prod', kubeconfigPath: world.kubeconfigPath, kubeconfigContext: 'prod' }]);
    const { handle } = await watchRollouts(clients);
    await clients.close();
    await handle.done;
    expect(handle.stats().end).toBe('stopped');
    await expect(clients.api('prod').get(ROLLOUTS, 'shop', 'checkout')).rejects.toThrow(/closed/);
  });
});
