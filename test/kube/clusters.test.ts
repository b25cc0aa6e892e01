import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { abortRollout } from '../../src/kube/rollout-operations.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { checkFreshness, refreshStale } from '../../src/kube/freshness-reader.js';
import { KubeActionError } from '../../src/kube/errors.js';
import { getRollout, listApplications } from '../../src/kube/reads.js';
import { writeKubeconfig } from '../../sandbox/kube/kubeconfig.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { failure, startKubeWorld, type KubeWorld } from './support.js';

let world: KubeWorld;
beforeEach(async () => {
  world = await startKubeWorld({ namespaces: ['shop', 'argocd', 'argocd-apps'], argocdNamespaces: ['argocd', 'argocd-apps'] });
});
afterEach(() => world.close());

describe('ClusterClients', () => {
  it('builds one client per configured cluster from kubeconfig contexts, keeping each cluster’s Argo CD namespaces', async () => {
    const clients = world.clusters;
    expect(clients.names()).toEqual(['prod', 'prod-no-status', 'prod-no-promote']);
    expect(clients.get('prod').argocdNamespaces).toEqual(['argocd', 'argocd-apps']);
    expect(clients.get('prod-no-status').argocdNamespaces).toEqual(['argocd']);
    expect(clients.get('prod').server).toBe(world.server.url);
    world.store.create(world.store.registry.byKind('Rollout'), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'x:1' }));
    const rollout = await getRollout(clients.api('prod'), 'shop', 'checkout');
    expect(rollout.metadata).toMatchObject({ name: 'checkout', namespace: 'shop', generation: 1 });
    // Reads and writes are done as the context's user.
    expect(world.server.requestCounts.get('get rollouts')).toBe(1);
  });

  it('names an unknown cluster and a missing context', () => {
    expect(() => world.clusters.get('staging')).toThrow('No cluster named "staging" is configured (clusters: prod, prod-no-status, prod-no-promote)');
    const err = (() => {
      try {
        new ClusterClients([{ name: 'eu', kubeconfigPath: world.kubeconfigPath, kubeconfigContext: 'eu-west' }]);
      } catch (e) {
        return e as KubeActionError;
      }
      throw new Error('expected a failure');
    })();
    expect(err.kind).toBe('unknown-cluster');
    expect(err.message).toBe('Cluster eu cannot be configured: context "eu-west" is not in the kubeconfig (contexts: prod, admin@prod, no-status@prod, no-promote@prod)');
  });

  it('clusters are reached by name, and a write names what is missing', async () => {
    expect(() => abortRollout(world.clusters.api('staging'), 'shop', 'checkout')).toThrow('No cluster named "staging" is configured');
    const err = await failure(abortRollout(world.clusters.api('prod'), 'shop', 'checkout'));
    expect(err.kind).toBe('not-found');
    expect(err.message).toBe('checkout (rollouts) was not found in prod/shop: it may have been deleted or renamed, or its CRD is not installed');
  });

  it('a refresh of a child deleted in the meantime is no failure', async () => {
    expect(await refreshStale(world.clusters.api('prod'), 'argocd', [{ name: 'gone' }])).toEqual({ requested: [], failed: [] });
  });

  it('lists follow pagination to the end', async () => {
    const appRt = world.store.registry.byKind('Application');
    for (let i = 0; i < 7; i++) {
      world.store.create(appRt, 'argocd', { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: `app-${i}` }, spec: { project: 'default', destination: {}, source: { repoURL: 'r' } } });
    }
    const list = await listApplications(world.clusters.api('prod'), 'argocd', { limit: 3 });
    expect(list.items.map((a) => a.metadata.name)).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4', 'app-5', 'app-6']);
    expect(world.server.requestCounts.get('list applications')).toBe(3);
  });
});

describe('API failures a person can act on', () => {
  const dir = tempDir('glidepath-kube-fail-');

  it('a cluster that does not answer in time is a timeout naming the cluster and the call', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const path = join(dir, 'silent');
    writeKubeconfig(path, [{ name: 'slow', server: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, users: [{ name: 'glidepath', token: 't' }], defaultUser: 'glidepath' }]);
    const clients = new ClusterClients([{ name: 'slow', kubeconfigPath: path, kubeconfigContext: 'slow' }], { requestTimeoutMs: 200 });
    const err = await failure(getRollout(clients.api('slow'), 'shop', 'checkout'));
    silent.closeAllConnections();
    silent.close();
    expect(err).toBeInstanceOf(KubeActionError);
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('Cluster slow did not answer within 200 ms when Glidepath tried to get rollouts "checkout" in slow/shop');
  });

  it('a cluster nobody listens on is unreachable', async () => {
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const path = join(dir, 'down');
    writeKubeconfig(path, [{ name: 'down', server: `http://127.0.0.1:${port}`, users: [{ name: 'glidepath', token: 't' }], defaultUser: 'glidepath' }]);
    const clients = new ClusterClients([{ name: 'down', kubeconfigPath: path, kubeconfigContext: 'down' }], { requestTimeoutMs: 2000 });
    const err = await failure(getRollout(clients.api('down'), 'shop', 'checkout'));
    expect(err.kind).toBe('unreachable');
    expect(err.message).toBe('Cannot reach cluster down (ECONNREFUSED) to get rollouts: check that its API server is up and reachable from Glidepath');
  });

  it('a token the cluster does not accept is named as such', async () => {
    const path = join(dir, 'badtoken');
    writeKubeconfig(path, [{ name: 'prod', server: world.server.url, caPem: world.server.caPem, users: [{ name: 'glidepath', token: 'wrong' }], defaultUser: 'glidepath' }]);
    const clients = new ClusterClients([{ name: 'prod', kubeconfigPath: path, kubeconfigContext: 'prod' }]);
    const err = await failure(getRollout(clients.api('prod'), 'shop', 'checkout'));
    expect(err.kind).toBe('unauthorized');
    expect(err.message).toBe("Cluster prod did not accept Glidepath's credentials (401) when it tried to get rollouts: check the token or kubeconfig configured for prod");
  });

  it('an object the cluster rejects (422) is named with its causes', async () => {
    const rt = world.store.registry.byKind('Rollout');
    world.store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'x:1' }));
    const err = await failure(world.clusters.api('prod').patch({ group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', kind: 'Rollout' }, 'shop', 'checkout', { spec: { replicas: 'many' } }));
    expect(err.kind).toBe('invalid');
    expect(err.status).toBe(422);
    expect(err.message).toMatch(/^prod\/shop rejected the patch of rollouts "checkout": spec\.replicas: .*; nothing was changed$/);
  });
});

describe('freshness of an ApplicationSet that is not there', () => {
  it('is a not-found naming it (and the LIST beside it cannot fail unheard)', async () => {
    const w = await startKubeWorld({ namespaces: ['argocd'] });
    try {
      const err = await failure(checkFreshness(w.clusters.api('prod-no-status'), 'argocd', 'checkout'));
      expect(err.kind).toBe('not-found');
      expect(err.message).toBe('checkout (applicationsets) was not found in prod-no-status/argocd: it may have been deleted or renamed, or its CRD is not installed');
      const both = await failure(checkFreshness(w.clusters.api('prod'), 'nowhere', 'checkout'));
      expect(both.kind).toBe('not-found');
    } finally {
      await w.close();
    }
  });
});
