/**
 * An Argo CD world on the stand-in: git, the Argo CD, ApplicationSet (RollingSync) and Rollouts
 * controller simulators on a fake clock, and an ApplicationSet `checkout` with one child per env.
 */
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { AppSetController } from '../../sandbox/kube/controllers/appset.js';
import { SimulatedGit, type DesiredManifests } from '../../sandbox/kube/controllers/git.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { startKubeWorld, type KubeWorld } from './support.js';

export const REPO = 'https://git.example.com/shop/deploy.git';
export const ENVS = ['dev', 'staging', 'prod'];

export interface ArgoWorld extends KubeWorld {
  clock: FakeClock;
  git: SimulatedGit;
  appSetController: AppSetController;
  stop(): Promise<void>;
  app(name: string): KubeObject;
  appSet(): KubeObject;
  entry(env: string): { status: string; step: string; targetRevisions: string[]; lastTransitionTime: string };
  image(env: string): string;
}

export function tree(version: string): Record<string, DesiredManifests> {
  return Object.fromEntries(ENVS.map((env) => [`checkout/${env}`, { rollouts: [{ name: 'checkout', image: `registry.example.com/shop/checkout:${version}`, steps: [] }] }]));
}

export async function startArgoWorld(options: { staleCache?: boolean | string[]; maxUpdate?: (number | undefined)[]; reconcileEveryMs?: number } = {}): Promise<ArgoWorld> {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const git = new SimulatedGit();
  git.commit(REPO, 'main', tree('1.28.0'));
  const world = await startKubeWorld({
    clock,
    namespaces: ['argocd', ...ENVS.map((e) => `shop-${e}`)],
    controllers: {
      rollouts: { podReadyMs: 5000 },
      argocd: [{ git, refreshDelayMs: 1000, jitterMs: 0, syncDurationMs: 2000, ...(options.reconcileEveryMs ? { reconcileEveryMs: options.reconcileEveryMs } : {}) }],
      appSet: { faults: { staleCache: options.staleCache ?? false } },
    },
  });
  const { store } = world;
  const appSetController = world.standIn.appSet!;
  store.create(store.registry.byKind('ApplicationSet'), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 'checkout' },
    spec: {
      generators: [{ list: { elements: ENVS.map((env) => ({ env })) } }],
      strategy: {
        type: 'RollingSync',
        rollingSync: {
          steps: ENVS.map((env, i) => ({
            matchExpressions: [{ key: 'env', operator: 'In', values: [env] }],
            ...(options.maxUpdate?.[i] !== undefined ? { maxUpdate: options.maxUpdate[i] } : {}),
          })),
        },
      },
      template: {
        metadata: { name: 'checkout-{{env}}', labels: { env: '{{env}}' } },
        spec: {
          project: 'default',
          source: { repoURL: REPO, targetRevision: 'main', path: 'checkout/{{env}}' },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'shop-{{env}}' },
          syncPolicy: { automated: { prune: true } },
        },
      },
    },
  });
  const appRt = store.registry.byKind('Application');
  return {
    ...world,
    clock,
    git,
    appSetController,
    stop: () => world.close(),
    app: (name) => store.get(appRt, 'argocd', name),
    appSet: () => store.get(store.registry.byKind('ApplicationSet'), 'argocd', 'checkout'),
    entry: (env) => store.get(store.registry.byKind('ApplicationSet'), 'argocd', 'checkout').status.applicationStatus.find((e: { application: string }) => e.application === `checkout-${env}`),
    image: (env) => store.get(store.registry.byKind('Rollout'), `shop-${env}`, 'checkout').spec.template.spec.containers[0].image,
  };
}

/** What a person does in the Argo CD UI: ask for a refresh of one app. */
export function annotateRefresh(w: ArgoWorld, env: string): void {
  w.store.patch(w.store.registry.byKind('Application'), 'argocd', `checkout-${env}`, 'merge', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } });
}

/** Advances the fake clock in steps until `done` holds (a watch reacts over real HTTP between steps). */
export async function advanceUntil(w: ArgoWorld, done: () => boolean, stepMs = 500, maxSteps = 200): Promise<void> {
  for (let i = 0; i < maxSteps && !done(); i++) {
    await w.clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 20));
  }
}
