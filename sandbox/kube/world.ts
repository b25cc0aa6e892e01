/**
 * The sample world the tests and the sandbox start from: two clusters, "dev" and "prod", each a
 * stand-in API server with the controller simulators running on it.
 *
 * - dev: Argo CD (namespace argocd) with Application checkout-dev → Rollout shop/checkout-dev.
 * - prod: Argo CD (argocd) with ApplicationSet "checkout", RollingSync in three steps
 *   (staging → prod-eu → prod-us, the last a manual gate with maxUpdate 0) → Rollouts
 *   shop/checkout-staging, checkout-eu, checkout-us; a second Argo CD instance (argocd-apps) with
 *   Application payments-ledger → Rollout payments/ledger; and the Kargo project kargo-checkout
 *   with Stages dev → staging → prod (classic: Promotions) and fleet after staging (target-aware,
 *   Kargo main: it selects the Targets prod-eu and prod-us and is promoted through Kargo's API,
 *   whose stand-in prod runs, as a PromotionRequest fanned out to one child Promotion per Target).
 * - Every Rollout and Application is labelled for Glidepath (hangar.io/release-tracked=true).
 * - One kubeconfig with contexts "dev" and "prod" (Glidepath's own service account) plus
 *   "admin@<cluster>" and "viewer@<cluster>"; the current context is admin@prod, the one a person
 *   uses (see KUBECONFIG_CONTEXTS).
 */
import { ADMIN_RULES, type PolicyRule, type SandboxUser } from './auth.js';
import type { CanaryStep } from './builders.js';
import { realClock, settle, type Clock } from './clock.js';
import type { AppSetController, AppSetFaults } from './controllers/appset.js';
import { REFRESH_ANNOTATION } from './controllers/argocd.js';
import { SimulatedGit, type DesiredManifests } from './controllers/git.js';
import type { KargoController } from './controllers/kargo.js';
import type { NotificationFaults } from './controllers/notifications.js';
import type { RolloutsController, RolloutsControllerOptions } from './controllers/rollouts.js';
import { freightManifest, stageManifest, targetManifest, warehouseManifest } from './kargo-builders.js';
import type { KargoApiStandIn } from './kargo-api-server.js';
import { writeKubeconfig } from './kubeconfig.js';
import type { KubeObject } from './object.js';
import { ResourceRegistry } from './resources.js';
import { startStandInCluster, type StandInCluster } from './stand-in.js';

export const DEPLOY_REPO = 'https://git.example.com/shop/deploy.git';
export const CHECKOUT_IMAGE = 'registry.example.com/shop/checkout';
const LEDGER_IMAGE = 'registry.example.com/payments/ledger';
const TRACKED = { 'hangar.io/release-tracked': 'true' };
const STEPS: CanaryStep[] = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 50 },
  { analysis: { templates: [{ templateName: 'success-rate' }] } },
  { pause: { duration: '2m' } },
  { setWeight: 80 },
];

/** What Glidepath's own deployment needs: the bot may read everything, patch Rollouts and Applications, and promote. */
export const GLIDEPATH_RULES: PolicyRule[] = [
  { verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['patch', 'update'], apiGroups: ['argoproj.io'], resources: ['rollouts', 'rollouts/status', 'applications'] },
  { verbs: ['create', 'patch'], apiGroups: ['kargo.akuity.io'], resources: ['promotions'] },
  { verbs: ['promote'], apiGroups: ['kargo.akuity.io'], resources: ['stages'] },
  // Clusters whose config says `authorization: both` (the sandbox's dev): a person's write is sent
  // as them and the cluster's RBAC asked first, as deploy/rbac grants.
  { verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] },
  { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
];

/** The people's Kubernetes group (the sandbox's identity map puts you in it): what the cluster lets them write. */
export const PEOPLE_GROUP = 'sre';
const PEOPLE_RULES: PolicyRule[] = [
  { verbs: ['patch', 'update'], apiGroups: ['argoproj.io'], resources: ['rollouts', 'rollouts/status', 'applications'] },
  { verbs: ['create', 'patch'], apiGroups: ['kargo.akuity.io'], resources: ['promotions'] },
  { verbs: ['promote'], apiGroups: ['kargo.akuity.io'], resources: ['stages'] },
];

/** Glidepath's token: its kubeconfig user, and (the sandbox's shortcut) its Kargo API token too, with the promote verb on Stages. */
export const GLIDEPATH_SANDBOX_TOKEN = 'glidepath-sandbox-token';

export const WORLD_USERS: SandboxUser[] = [
  { name: 'glidepath', token: GLIDEPATH_SANDBOX_TOKEN, rules: GLIDEPATH_RULES },
  { name: 'admin', token: 'admin-sandbox-token', rules: ADMIN_RULES },
  { name: 'viewer', token: 'viewer-sandbox-token', rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] }] },
];

/** The kubeconfig's contexts, each with who it is, for a banner a person reads. */
export const KUBECONFIG_CONTEXTS: { contexts: string; who: string }[] = [
  { contexts: 'admin@dev, admin@prod', who: 'you, an administrator: may do anything (the default context)' },
  { contexts: 'viewer@dev, viewer@prod', who: 'read-only: get, list and watch' },
  { contexts: 'dev, prod', who: "Glidepath's own service account: reads everything, patches Rollouts and Applications, promotes Kargo stages, impersonates people" },
];

/** A person's context: kubectl without --context acts as an administrator, never as the bot. */
export const DEFAULT_CONTEXT = 'admin@prod';

export interface WorldWebhooks {
  rolloutsUrl: string;
  argocdUrl: string;
  /** Ingest token per cluster name. */
  tokens: Record<'dev' | 'prod', string>;
}

export interface SampleWorldOptions {
  clock?: Clock;
  kubeconfigPath?: string;
  /** Where the notifications engines POST facts; without it no engine runs. */
  webhooks?: WorldWebhooks;
  podReadyMs?: number;
  notificationFaults?: Partial<NotificationFaults>;
  appSetFaults?: Partial<AppSetFaults>;
  heartbeatEveryMs?: number;
  users?: SandboxUser[];
  /** Outcome of the canary's analysis step (default Successful). */
  analysisOutcome?: RolloutsControllerOptions['analysisOutcome'];
  /** The port of prod's Kargo API stand-in (the sandbox writes its URL into Glidepath's config first); default any free one. */
  kargoApiPort?: number;
}

export interface ReleaseOptions {
  /** The prod apps get a PostSync hook that waits while their Rollout is paused (the hook-pinned sync). */
  postSyncHook?: boolean;
  /** Every sync of this release fails with this message. */
  failSync?: string;
  /** Only these environments' paths (e.g. `checkout/dev`) get the new version; default all. */
  paths?: string[];
}

export interface SimulatedCluster extends StandInCluster {
  name: 'dev' | 'prod';
  rollouts: RolloutsController;
}

export interface SampleWorld {
  clusters: { dev: SimulatedCluster; prod: SimulatedCluster };
  git: SimulatedGit;
  appSet: AppSetController;
  kargo: KargoController;
  /** prod's Kargo API stand-in (target-aware Stages are promoted through it). */
  kargoApi: KargoApiStandIn;
  kubeconfigPath?: string;
  /** Commits a new checkout version for every environment and asks Argo CD to refresh. */
  releaseCheckout(version: string, releaseId: string, options?: ReleaseOptions): string;
  stop(): Promise<void>;
}

function checkoutTree(version: string, releaseId: string, options: ReleaseOptions = {}): Record<string, DesiredManifests> {
  const rollout = (name: string, labels: Record<string, string>): DesiredManifests => ({
    ...(options.postSyncHook && labels.env === 'prod' ? { postSyncHook: true } : {}),
    ...(options.failSync ? { failSync: options.failSync } : {}),
    rollouts: [{ name, image: `${CHECKOUT_IMAGE}:${version}`, replicas: 4, steps: STEPS, trafficRouting: true, labels: { 'app.kubernetes.io/part-of': 'checkout', ...TRACKED, ...labels }, annotations: { 'hangar.io/release-id': releaseId } }],
  });
  const tree: Record<string, DesiredManifests> = {
    'checkout/dev': rollout('checkout-dev', { env: 'dev' }),
    'checkout/staging': rollout('checkout-staging', { env: 'staging' }),
    'checkout/prod-eu': rollout('checkout-eu', { env: 'prod', region: 'eu' }),
    'checkout/prod-us': rollout('checkout-us', { env: 'prod', region: 'us' }),
  };
  return options.paths ? Object.fromEntries(Object.entries(tree).filter(([path]) => options.paths!.includes(path))) : tree;
}

function application(namespace: string, name: string, path: string, destNamespace: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { namespace, name, labels: { ...TRACKED, ...labels } },
    spec: {
      project: 'default',
      source: { repoURL: DEPLOY_REPO, targetRevision: 'main', path },
      destination: { server: 'https://kubernetes.default.svc', namespace: destNamespace },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    },
  };
}

export async function startSampleWorld(options: SampleWorldOptions = {}): Promise<SampleWorld> {
  const clock = options.clock ?? realClock;
  const registry = new ResourceRegistry();
  const users = options.users ?? WORLD_USERS;
  const git = new SimulatedGit();
  git.commit(DEPLOY_REPO, 'main', { ...checkoutTree('1.28.0', 'rel-1.28.0'), 'payments/ledger': { rollouts: [{ name: 'ledger', image: `${LEDGER_IMAGE}:3.4.1`, replicas: 3, steps: STEPS, labels: { 'app.kubernetes.io/part-of': 'ledger', env: 'prod', ...TRACKED }, annotations: { 'hangar.io/release-id': 'ledger-3.4.1' } }] } });

  const cluster = async (name: 'dev' | 'prod', namespaces: string[], argocdNamespaces: string[][]): Promise<SimulatedCluster> => {
    const webhook = (url: string) => ({ url, token: options.webhooks!.tokens[name] });
    const resyncEveryMs = options.heartbeatEveryMs;
    const standIn = await startStandInCluster({
      name,
      users,
      defaultUser: 'glidepath',
      clock,
      registry,
      namespaces,
      kubeconfigPath: false,
      kargoAdmission: name === 'prod',
      ...(name === 'prod' ? { kargoApi: options.kargoApiPort ? { port: options.kargoApiPort } : true } : {}),
      controllers: {
        rollouts: { podReadyMs: options.podReadyMs ?? 10_000, analysisOutcome: options.analysisOutcome },
        argocd: argocdNamespaces.map((ns) => ({ git, namespaces: ns })),
        ...(name === 'prod' ? { appSet: { namespaces: ['argocd'], faults: options.appSetFaults }, kargo: true as const } : {}),
        ...(options.webhooks
          ? {
              notifications: {
                rollouts: { webhook: webhook(options.webhooks.rolloutsUrl), resyncEveryMs, faults: options.notificationFaults },
                applications: argocdNamespaces.map((ns) => ({ namespaces: ns, webhook: webhook(options.webhooks!.argocdUrl), resyncEveryMs, faults: options.notificationFaults })),
              },
            }
          : {}),
      },
    });
    standIn.server.authorizer.grant('Group', PEOPLE_GROUP, PEOPLE_RULES);
    return { ...standIn, name, rollouts: standIn.rollouts! };
  };

  const dev = await cluster('dev', ['argocd', 'shop'], [['argocd']]);
  const prod = await cluster('prod', ['argocd', 'argocd-apps', 'shop', 'payments', 'kargo-checkout'], [['argocd'], ['argocd-apps']]);
  const appRt = registry.byKind('Application');

  dev.store.create(appRt, 'argocd', application('argocd', 'checkout-dev', 'checkout/dev', 'shop', { 'app.kubernetes.io/part-of': 'checkout', env: 'dev' }));
  prod.store.create(appRt, 'argocd-apps', application('argocd-apps', 'payments-ledger', 'payments/ledger', 'payments', { 'app.kubernetes.io/part-of': 'ledger', env: 'prod' }));
  const appSet = prod.appSet!;
  prod.store.create(registry.byKind('ApplicationSet'), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { namespace: 'argocd', name: 'checkout' },
    spec: {
      generators: [{ list: { elements: [{ target: 'staging', env: 'staging', region: 'eu' }, { target: 'prod-eu', env: 'prod', region: 'eu' }, { target: 'prod-us', env: 'prod', region: 'us' }] } }],
      strategy: {
        type: 'RollingSync',
        rollingSync: {
          steps: [
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['staging'] }] },
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }, { key: 'region', operator: 'In', values: ['eu'] }] },
            { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }, { key: 'region', operator: 'In', values: ['us'] }], maxUpdate: 0 },
          ],
        },
      },
      template: {
        metadata: { name: 'checkout-{{target}}', labels: { ...TRACKED, 'app.kubernetes.io/part-of': 'checkout', env: '{{env}}', region: '{{region}}' } },
        spec: {
          project: 'default',
          source: { repoURL: DEPLOY_REPO, targetRevision: 'main', path: 'checkout/{{target}}' },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
          syncPolicy: { automated: { prune: true } },
        },
      },
    },
  });

  // The gated last step was approved once, long ago: the world starts fully deployed.
  await settle();
  if (prod.store.tryGet(appRt, 'argocd', 'checkout-prod-us')) {
    prod.store.mutate(appRt, 'argocd', 'checkout-prod-us', (a) => void (a.operation = { initiatedBy: { username: 'admin' }, sync: {} }));
  }

  // Kargo project on prod: dev → staging → prod.
  const k = (kind: string) => registry.byKind(kind, 'kargo.akuity.io');
  const ns = 'kargo-checkout';
  prod.store.create(k('Warehouse'), ns, warehouseManifest(ns, 'checkout', CHECKOUT_IMAGE));
  prod.store.create(k('Freight'), ns, freightManifest(ns, 'checkout', { repoURL: CHECKOUT_IMAGE, tag: '1.28.0' }, 'steady-otter'));
  prod.store.create(k('Freight'), ns, freightManifest(ns, 'checkout', { repoURL: CHECKOUT_IMAGE, tag: '1.29.0' }, 'brave-lynx'));
  prod.store.create(k('Stage'), ns, stageManifest({ namespace: ns, name: 'dev', warehouse: 'checkout', labels: { tier: 'pre-prod' } }));
  prod.store.create(k('Stage'), ns, stageManifest({ namespace: ns, name: 'staging', warehouse: 'checkout', upstream: ['dev'], apps: [{ name: 'checkout-staging' }], labels: { tier: 'pre-prod' } }));
  prod.store.create(k('Stage'), ns, stageManifest({ namespace: ns, name: 'prod', warehouse: 'checkout', upstream: ['staging'], apps: [{ name: 'checkout-prod-eu' }, { name: 'checkout-prod-us' }], labels: { tier: 'prod' } }));
  // Kargo main: one Stage for the prod fleet, its Targets selected by label (not `lab`).
  for (const [target, fleet] of [['prod-eu', 'checkout'], ['prod-us', 'checkout'], ['lab', 'lab']] as const) {
    prod.store.create(k('Target'), ns, targetManifest(ns, target, { fleet }, { cluster: target }));
  }
  prod.store.create(k('Stage'), ns, stageManifest({ namespace: ns, name: 'fleet', warehouse: 'checkout', upstream: ['staging'], apps: [{ name: 'checkout-prod-eu' }, { name: 'checkout-prod-us' }], labels: { tier: 'prod' }, targets: [{ fleet: 'checkout' }] }));
  const kargo = prod.kargo!;

  if (options.kubeconfigPath) {
    writeKubeconfig(options.kubeconfigPath, [dev.kubeconfigEntry(), prod.kubeconfigEntry()], DEFAULT_CONTEXT);
  }

  return {
    clusters: { dev, prod },
    git,
    appSet,
    kargo,
    kargoApi: prod.kargoApi!,
    kubeconfigPath: options.kubeconfigPath,
    releaseCheckout(version, releaseId, releaseOptions) {
      const sha = git.commit(DEPLOY_REPO, 'main', checkoutTree(version, releaseId, releaseOptions));
      // Refreshed in RollingSync step order. The other order reproduces upstream's out-of-order
      // progression (argo-cd#29347): a later step's app refreshes while an earlier one still looks
      // Healthy at the old revision.
      const steps = new Map<string, number>(
        (prod.store.get(registry.byKind('ApplicationSet'), 'argocd', 'checkout').status?.applicationStatus ?? []).map((e: { application: string; step: string }) => [e.application, Number(e.step)]),
      );
      for (const c of [dev, prod]) {
        const apps = c.store.list(appRt, 'argocd').items.sort((a, b) => (steps.get(a.metadata.name) ?? 99) - (steps.get(b.metadata.name) ?? 99));
        for (const app of apps) {
          c.store.patch(appRt, 'argocd', app.metadata.name, 'merge', { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
        }
      }
      return sha;
    },
    async stop() {
      for (const c of [dev, prod]) await c.stop();
    },
  };
}
