/**
 * A stand-in cluster for the Kubernetes layer's tests: the real API server stand-in on 127.0.0.1,
 * a `glidepath` user whose RBAC rules are read from deploy/rbac (so every test runs with exactly
 * the permissions Glidepath ships), an admin, and a `no-status` user lacking rollouts/status.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { parse } from 'yaml';
import type { KubeApiWatchOptions } from '../../src/kube/api.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { ADMIN_RULES, type PolicyRule, type SandboxUser } from '../../sandbox/kube/auth.js';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import type { Clock, FakeClock } from '../../sandbox/kube/clock.js';
import type { KubeServer } from '../../sandbox/kube/server.js';
import { startStandInCluster, type StandInCluster, type StandInControllers } from '../../sandbox/kube/stand-in.js';
import type { ObjectStore } from '../../sandbox/kube/store.js';

export interface ClusterRoleRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export function shippedClusterRoleRules(): ClusterRoleRule[] {
  const doc = parse(readFileSync(new URL('../../deploy/rbac/glidepath-clusterrole.yaml', import.meta.url), 'utf8')) as { rules: ClusterRoleRule[] };
  return doc.rules;
}

export const GLIDEPATH_RULES: PolicyRule[] = shippedClusterRoleRules().map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs }));

export const USERS: SandboxUser[] = [
  { name: 'glidepath', token: 'glidepath-token', rules: GLIDEPATH_RULES },
  { name: 'admin', token: 'admin-token', rules: ADMIN_RULES },
  { name: 'no-status', token: 'no-status-token', rules: GLIDEPATH_RULES.filter((r) => !r.resources.includes('rollouts/status')) },
  { name: 'no-promote', token: 'no-promote-token', rules: GLIDEPATH_RULES.map((r) => ({ ...r, verbs: r.verbs.filter((v) => v !== 'promote') })) },
];

export interface KubeWorld {
  server: KubeServer;
  store: ObjectStore;
  kubeconfigPath: string;
  /** The stand-in itself, with the controller simulators asked for. */
  standIn: StandInCluster;
  /** Clients for cluster `prod` (as glidepath), `prod-no-status` and `prod-no-promote` (rules missing). */
  clusters: ClusterClients;
  close(): Promise<void>;
}

export async function startKubeWorld(
  options: {
    namespaces?: string[];
    clock?: Clock;
    argocdNamespaces?: string[];
    requestTimeoutMs?: number;
    controllers?: StandInControllers;
    /** Kargo's API stand-in; clusters `prod` and `prod-no-promote` then reach it with their users' tokens. */
    kargoApi?: boolean;
    /** Watch bounds of every cluster client (line cap, byte budget, quiet time). */
    watch?: KubeApiWatchOptions;
  } = {},
): Promise<KubeWorld> {
  const standIn = await startStandInCluster({
    name: 'prod',
    users: USERS,
    defaultUser: 'glidepath',
    namespaces: options.namespaces ?? ['shop', 'argocd', 'kargo-demo'],
    kargoAdmission: true,
    ...(options.kargoApi ? { kargoApi: true } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.controllers ? { controllers: options.controllers } : {}),
  });
  const { server, store } = standIn;
  const kubeconfigPath = standIn.kubeconfigPath!;
  const kargoApi = (token: string) => (standIn.kargoApi ? { kargoApiEndpoint: { url: standIn.kargoApi.url, token } } : {});
  const clusters = new ClusterClients(
    [
      { name: 'prod', kubeconfigPath, kubeconfigContext: 'prod', argocdNamespaces: options.argocdNamespaces ?? ['argocd'], ...kargoApi('glidepath-token') },
      { name: 'prod-no-status', kubeconfigPath, kubeconfigContext: 'no-status@prod' },
      { name: 'prod-no-promote', kubeconfigPath, kubeconfigContext: 'no-promote@prod', ...kargoApi('no-promote-token') },
    ],
    { requestTimeoutMs: options.requestTimeoutMs ?? 5000, ...(options.watch ? { watch: options.watch } : {}) },
  );
  const close = async (): Promise<void> => {
    // Glidepath's side first, as at shutdown: its watches end as stopped, not as a server gone.
    await clusters.close();
    await standIn.stop();
  };
  return { server, store, kubeconfigPath, standIn, clusters, close };
}

/** The operation ran (not refused): its result, or a failure naming the refusal. */
export async function completed<T extends { kind: string }>(promise: Promise<T>): Promise<Extract<T, { kind: 'done' }>> {
  const result = await promise;
  if (result.kind !== 'done') throw new Error(`expected the action to run, it was ${result.kind}: ${(result as { reason?: string }).reason}`);
  return result as Extract<T, { kind: 'done' }>;
}

/** The operation refused (a value, not an exception): the refusal with its reason and details. */
export async function refusal(promise: Promise<{ kind: string }>): Promise<{ kind: 'refused'; reason: string; details: any }> {
  const result = await promise;
  if (result.kind !== 'refused') throw new Error(`expected a refusal, the action was ${result.kind}`);
  return result as { kind: 'refused'; reason: string; details: any };
}

export async function failure(promise: Promise<unknown>): Promise<Error & Record<string, any>> {
  try {
    await promise;
  } catch (err) {
    return err as Error & Record<string, any>;
  }
  throw new Error('expected the call to fail');
}

/** A canary of a new image on `shop/checkout`, paused at its indefinite pause step (index 1): what an Approve of step 2 expects. */
export async function pausedAtStep1(world: Pick<KubeWorld, 'store'>, clock: FakeClock): Promise<{ generation: number; podHash: string; stepIndex: number }> {
  const rt = world.store.registry.byKind('Rollout', 'argoproj.io');
  world.store.create(rt, 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.28.0' }));
  await clock.advance(0);
  world.store.mutate(rt, 'shop', 'checkout', (r) => void (r.spec.template.spec.containers[0].image = 'registry.example.com/shop/checkout:1.29.0'));
  await clock.advance(6000);
  const r = world.store.get(rt, 'shop', 'checkout');
  expect(r.status).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
  return { generation: r.metadata.generation!, podHash: r.status.currentPodHash, stepIndex: 1 };
}
