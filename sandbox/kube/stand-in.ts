/**
 * One stand-in cluster: object store (CRDs from sandbox/kube/crds), namespaces, the HTTPS API
 * server, a kubeconfig, Kargo's admission webhooks and whichever controller simulators the caller
 * asks for. Tests, benchmarks and the sample world all start their clusters here, so a cluster is
 * put together one way only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { SandboxUser } from './auth.js';
import { namespaceManifest } from './builders.js';
import { realClock, type Clock } from './clock.js';
import { AppSetController, type AppSetControllerOptions } from './controllers/appset.js';
import { ArgoCdController, type ArgoCdControllerOptions } from './controllers/argocd.js';
import { installKargoAdmission } from './controllers/kargo-admission.js';
import { KargoController, type KargoControllerOptions } from './controllers/kargo.js';
import { KargoRequestController } from './controllers/kargo-requests.js';
import { startKargoApiServer, type KargoApiStandIn } from './kargo-api-server.js';
import { NotificationsEngine, type NotificationsEngineOptions } from './controllers/notifications.js';
import { RolloutsController, type RolloutsControllerOptions } from './controllers/rollouts.js';
import type { KubeconfigCluster } from './kubeconfig.js';
import { ResourceRegistry } from './resources.js';
import { startKubeServer, type KubeServer } from './server.js';
import { ObjectStore } from './store.js';

type Simulator<T> = Omit<T, 'store' | 'clock'>;

/** Controller simulators to run on the cluster; `true` runs one with its defaults. */
export interface StandInControllers {
  rollouts?: true | Simulator<RolloutsControllerOptions>;
  /** One Argo CD application controller per entry (e.g. one per Argo CD instance and its namespaces). */
  argocd?: Simulator<ArgoCdControllerOptions>[];
  appSet?: true | Simulator<AppSetControllerOptions>;
  /** The Kargo controller: Promotions, Stage health, and (Kargo main) PromotionRequests fanned out to Targets. */
  kargo?: true | Simulator<KargoControllerOptions>;
  /** Notifications engines POSTing facts: one for Rollouts (needs `rollouts`), one per Argo CD namespace set. */
  notifications?: {
    rollouts?: Omit<Simulator<NotificationsEngineOptions>, 'kind' | 'rollouts'>;
    applications?: Omit<Simulator<NotificationsEngineOptions>, 'kind'>[];
  };
}

export interface StandInClusterOptions {
  /** Cluster name: the kubeconfig context of `defaultUser` (others get `<user>@<name>`). Default `sandbox`. */
  name?: string;
  users: SandboxUser[];
  /** User of the context named after the cluster (default: the first user). */
  defaultUser?: string;
  clock?: Clock;
  /** Share one registry between clusters: loading the CRDs is the slow part of a start. */
  registry?: ResourceRegistry;
  /** Watch events kept for resumption (see ObjectStore). */
  historyLimit?: number;
  namespaces?: string[];
  scheme?: 'https' | 'http';
  /**
   * Where the kubeconfig goes: a path, undefined for a fresh temporary file, or false for none (a
   * caller writing one kubeconfig for several clusters uses `kubeconfigEntry()`).
   */
  kubeconfigPath?: string | false;
  /** Kargo's webhooks: Promotion naming and checks, the `promote` verb on Stages. */
  kargoAdmission?: boolean;
  /** A stand-in of Kargo's own API server (kargo-api-server.ts), over this cluster's users and RBAC; on `port` if given. */
  kargoApi?: boolean | { port: number };
  controllers?: StandInControllers;
}

export interface StandInCluster {
  name: string;
  store: ObjectStore;
  registry: ResourceRegistry;
  server: KubeServer;
  clock: Clock;
  kubeconfigPath: string | undefined;
  rollouts: RolloutsController | undefined;
  argocd: ArgoCdController[];
  appSet: AppSetController | undefined;
  kargo: KargoController | undefined;
  kargoRequests: KargoRequestController | undefined;
  kargoApi: KargoApiStandIn | undefined;
  notifications: NotificationsEngine[];
  /** client-node configuration from the kubeconfig, optionally on another context (`admin@prod`). */
  kubeConfig(context?: string): KubeConfig;
  /** This cluster as an entry of a kubeconfig naming several clusters. */
  kubeconfigEntry(defaultUser?: string): KubeconfigCluster;
  /** Stops every controller and engine, then the server. */
  stop(): Promise<void>;
}

function options<T>(value: true | T): T | Record<string, never> {
  return value === true ? {} : value;
}

export async function startStandInCluster(opts: StandInClusterOptions): Promise<StandInCluster> {
  const name = opts.name ?? 'sandbox';
  const clock = opts.clock ?? realClock;
  const registry = opts.registry ?? new ResourceRegistry();
  const store = new ObjectStore(registry, { clock, ...(opts.historyLimit !== undefined ? { historyLimit: opts.historyLimit } : {}) });
  for (const ns of opts.namespaces ?? []) store.create(registry.byKind('Namespace'), undefined, namespaceManifest(ns));
  const server = await startKubeServer({ store, users: opts.users, ...(opts.scheme ? { scheme: opts.scheme } : {}) });
  if (opts.kargoAdmission) installKargoAdmission(store, (r) => server.authorizer.can(r));

  const defaultUser = opts.defaultUser ?? opts.users[0]?.name ?? '';
  // A folder of its own when the caller named no path: removed again by stop().
  const ownDir = opts.kubeconfigPath === undefined ? mkdtempSync(join(tmpdir(), 'glidepath-kube-')) : undefined;
  const kubeconfigPath = opts.kubeconfigPath === false ? undefined : (opts.kubeconfigPath ?? join(ownDir!, 'kubeconfig'));
  if (kubeconfigPath) server.writeKubeconfig(kubeconfigPath, name, defaultUser);

  const c = opts.controllers ?? {};
  const rollouts = c.rollouts ? new RolloutsController({ store, clock, ...options(c.rollouts) }).start() : undefined;
  const argocd = (c.argocd ?? []).map((a) => new ArgoCdController({ store, clock, ...a }).start());
  const appSet = c.appSet ? new AppSetController({ store, clock, ...options(c.appSet) }).start() : undefined;
  const kargo = c.kargo ? new KargoController({ store, clock, ...options(c.kargo) }).start() : undefined;
  const kargoRequests = c.kargo ? new KargoRequestController({ store, clock }).start() : undefined;
  const kargoApi = opts.kargoApi ? await startKargoApiServer({ store, authorizer: server.authorizer, ...(typeof opts.kargoApi === 'object' ? { port: opts.kargoApi.port } : {}) }) : undefined;
  const notifications: NotificationsEngine[] = [];
  if (c.notifications?.rollouts) {
    if (!rollouts) throw new Error('a Rollouts notifications engine needs the Rollouts controller (controllers.rollouts)');
    notifications.push(new NotificationsEngine({ kind: 'rollout', store, clock, rollouts, ...c.notifications.rollouts }).start());
  }
  for (const n of c.notifications?.applications ?? []) notifications.push(new NotificationsEngine({ kind: 'application', store, clock, ...n }).start());

  return {
    name,
    store,
    registry,
    server,
    clock,
    kubeconfigPath,
    rollouts,
    argocd,
    appSet,
    kargo,
    kargoRequests,
    kargoApi,
    notifications,
    kubeConfig(context) {
      if (!kubeconfigPath) throw new Error(`cluster ${name} was started without a kubeconfig`);
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      if (context) kc.setCurrentContext(context);
      return kc;
    },
    kubeconfigEntry(user = defaultUser) {
      return { name, server: server.url, caPem: server.caPem, users: server.authorizer.users(), defaultUser: user };
    },
    async stop() {
      appSet?.stop();
      kargo?.stop();
      kargoRequests?.stop();
      await kargoApi?.close();
      rollouts?.stop();
      for (const a of argocd) a.stop();
      for (const n of notifications) n.stop();
      await server.close();
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    },
  };
}
