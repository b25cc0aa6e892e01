/**
 * A stand-in cluster (startStandInCluster, the Rollouts simulator, Glidepath's shipped RBAC)
 * watched by a real Glidepath (`facts: watch`, no notification engine: by default one `shop`
 * pipeline with a prod stage) that writes its threads to the Slack stand-in: the world of the
 * tests that check what a thread says about the cluster. `deploy` rolls two-step canaries;
 * `runFor` advances the cluster's clock. Other controllers (Argo CD, the ApplicationSet
 * controller) and other stages can be asked for; with `kargo`, the Kargo simulator and its
 * webhooks run too, and `pipelines` replaces the `shop` pipeline (test/helpers/kargo-world.ts
 * builds a Kargo project on it); with `kargoApi`, Kargo's API stand-in as well, configured in
 * Glidepath as a deployment would (URL in the config, token in the environment).
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { parseConfigFile } from '../../src/config/file.js';
import type { Glidepath } from '../../src/glidepath.js';
import { rolloutManifest, type CanaryStep } from '../../sandbox/kube/builders.js';
import { FakeClock } from '../../sandbox/kube/clock.js';
import type { KargoControllerOptions } from '../../sandbox/kube/controllers/kargo.js';
import type { RolloutsControllerOptions } from '../../sandbox/kube/controllers/rollouts.js';
import { startStandInCluster, type StandInCluster, type StandInControllers } from '../../sandbox/kube/stand-in.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { SLACK_LIMITS, type StandInLimits } from '../../sandbox/slack/rate-limits.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { dropPrefix, startTestGlidepath, testEnv } from './glidepath.js';
import { waitFor } from './wait.js';
import { mountConfig, type ConfigMount } from './config-mount.js';
import type { Logger } from '../../src/obs/logger.js';
import { GLIDEPATH_RULES, USERS } from '../kube/support.js';

const LABELS = { 'app.kubernetes.io/part-of': 'shop', env: 'prod' };
const BOT_TOKEN = 'xoxb-watched-world';
const KARGO_API_TOKEN = 'glidepath-kargo-api-token';

export interface WatchedWorldOptions {
  channel: string;
  steps?: CanaryStep[];
  rollouts?: Omit<RolloutsControllerOptions, 'store' | 'clock'>;
  /** The Kargo simulator (and Kargo's admission webhooks). */
  kargo?: Omit<KargoControllerOptions, 'store' | 'clock'>;
  namespaces?: string[];
  /** YAML list items under `pipelines:`, instead of the `shop` pipeline. */
  pipelines?: string;
  /** YAML list items under `pipelineTemplates:`; with them and no `pipelines`, the config names no pipeline of its own. */
  templates?: string;
  /** Slack channels the bot is not a member of (the stand-in answers not_in_channel). */
  notInChannel?: string[];
  /** More settings, as YAML flow entries (`unhealthyGraceMinutes: 0`). */
  settings?: string;
  /** More top-level config, as YAML (an `identities:` block, …). */
  extraConfig?: string;
  /** More environment (CI_TOKENS, …). */
  env?: Record<string, string>;
  /** The pipeline (default `shop`) and its stages, one YAML flow mapping each (default: Rollouts of shop, env=prod); ignored with `pipelines`. */
  pipeline?: string;
  stages?: string[];
  /** Controller simulators besides the Rollouts and Kargo ones (Argo CD, the ApplicationSet controller). */
  controllers?: Omit<StandInControllers, 'rollouts' | 'kargo'>;
  /** Kargo's API stand-in on the cluster, and Glidepath configured with it (`kargoApi.url`, its token in KARGO_API_TOKENS). */
  kargoApi?: boolean;
  /**
   * The config is mounted as a ConfigMap is (test/helpers/config-mount.ts) and Glidepath reloads it
   * when it changes (debounced 200 ms, no timed re-read); `logger` sees what it logs.
   */
  mountConfig?: { logger?: Logger };
  /** Glidepath is not started with the world (the cluster runs unwatched): `startGlidepath()` starts it later. */
  glidepathLater?: boolean;
}

export interface WatchedWorld {
  cluster: StandInCluster;
  clock: FakeClock;
  /** The custom objects API as the cluster's admin (kubectl). */
  admin(): CustomObjectsApi;
  slack: SlackStandIn;
  /** With `mountConfig`: the mounted config file (swap it to reload). */
  mount?: ConfigMount;
  /** The Glidepath watching the cluster (with `glidepathLater`, only once `startGlidepath()` resolved). */
  readonly app: Glidepath;
  /** Starts Glidepath (with `glidepathLater`), resolving once it holds the cluster's watch lease. */
  startGlidepath(): Promise<Glidepath>;
  /** Closes Glidepath and starts a new one on the same Redis prefix and config (a restart); resolves once it holds the watch lease. */
  restartGlidepath(): Promise<Glidepath>;
  /** Creates the Rollout (with `labels` instead of the shop's, when given), or rolls it to another version and release id. */
  deploy(name: string, version: string, releaseId: string, labels?: Record<string, string>, at?: { namespace?: string; annotations?: Record<string, string> }): void;
  /** `kubectl delete rollout`, as the cluster's admin. */
  remove(name: string, namespace?: string): void;
  runFor(ms: number): Promise<void>;
  /** `kubectl argo rollouts promote|abort`: a merge patch of the status subresource, as an admin. */
  kubectlStatusPatch(name: string, status: Record<string, unknown>, namespace?: string): Promise<void>;
  replies(): TranscriptMessage[];
  /**
   * Resolves once Glidepath has nothing left to do now, seen twice in a row: no fact waiting or
   * being reduced (a delayed fact is a recheck for later) and no Slack call queued or retrying.
   * A count of replies is only final after it: a duplicate may still be in the writer's queue.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const NOW_STATES = ['active', 'waiting', 'prioritized', 'waiting-children'] as const;

/**
 * Slack ten times as fast, on both sides: the stand-in's limits and Glidepath's budgets scaled
 * together, so the budgets still pace the writer against limits it must keep. These tests read
 * what a thread says; at Slack's real 50 edits a minute a scripted rollout's parent spends tens of
 * seconds catching up. Pacing itself is tested at the real figures (test/slack/).
 */
const SLACK_SPEED = 10;
const FAST_SLACK: StandInLimits = {
  postMessagePerChannel: { burst: SLACK_LIMITS.postMessagePerChannel.burst * SLACK_SPEED, perSecond: SLACK_LIMITS.postMessagePerChannel.perSecond * SLACK_SPEED },
  methods: Object.fromEntries(Object.entries(SLACK_LIMITS.methods).map(([method, b]) => [method, { burst: b.burst * SLACK_SPEED, perSecond: b.perSecond * SLACK_SPEED }])),
};
const FAST_BUDGETS = {
  SLACK_UPDATES_PER_MINUTE: String(50 * SLACK_SPEED),
  SLACK_POSTS_PER_CHANNEL_PER_MINUTE: String(60 * SLACK_SPEED),
};

export async function startWatchedWorld(o: WatchedWorldOptions): Promise<WatchedWorld> {
  const clock = new FakeClock('2026-08-20T09:00:00Z');
  const cluster = await startStandInCluster({
    name: 'prod',
    // The Kargo API token is a credential of its own (a Kargo role with the promote verb), as deployed.
    users: o.kargoApi ? [...USERS, { name: 'glidepath-kargo', token: KARGO_API_TOKEN, rules: GLIDEPATH_RULES }] : USERS,
    clock,
    namespaces: o.namespaces ?? ['shop', 'argocd'],
    kargoAdmission: o.kargo !== undefined,
    ...(o.kargoApi ? { kargoApi: true } : {}),
    controllers: { rollouts: { podReadyMs: 1_000, ...o.rollouts }, ...o.controllers, ...(o.kargo ? { kargo: o.kargo } : {}) },
  });
  const slack = await startSlackStandIn({ botToken: BOT_TOKEN, limits: FAST_SLACK, ...(o.notInChannel ? { notInChannel: o.notInChannel } : {}) });
  const kargoApi = cluster.kargoApi ? `, kargoApi: { url: "${cluster.kargoApi.url}" }` : '';
  const env = testEnv({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'watched-world-signing-secret',
    SLACK_API_URL: slack.apiUrl,
    ...FAST_BUDGETS,
    ...(cluster.kargoApi ? { KARGO_API_TOKENS: `prod=${KARGO_API_TOKEN}` } : {}),
    ...o.env,
  });
  const stages = o.stages ?? ['{ name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=shop,env=prod" } }'];
  const pipelines =
    o.pipelines ??
    (o.templates ? ' []' : undefined) ??
    `
  - name: ${o.pipeline ?? 'shop'}
    channel: ${o.channel}
    stages:
${stages.map((stage) => `      - ${stage}`).join('\n')}`;
  const configText = `
settings: { watchLeaseSeconds: 2, watchResyncMinutes: 10${o.settings ? `, ${o.settings}` : ''} }
clusters:
  - { name: prod, kubeconfigPath: ${cluster.kubeconfigPath}, kubeconfigContext: prod, facts: watch${kargoApi} }
pipelines:${pipelines}
${o.templates ? `pipelineTemplates:${o.templates}` : ''}
${o.extraConfig ?? ''}
`;
  const config = parseConfigFile(configText);
  const mount = o.mountConfig ? mountConfig(configText) : undefined;
  const reload = mount ? { configSource: { path: mount.path, hash: mount.hash, debounceMs: 200, pollMs: 0 }, ...(o.mountConfig?.logger ? { logger: o.mountConfig.logger } : {}) } : {};
  let app: Glidepath | undefined;
  const startApp = async (): Promise<Glidepath> => {
    if (app) return app;
    const started = (app = await startTestGlidepath(config, env, reload));
    await waitFor(async () => started.watchSource?.held().includes('prod') || undefined, 'lease held');
    return started;
  };
  if (!o.glidepathLater) await startApp();
  const { store } = cluster;
  const rt = () => store.registry.byKind('Rollout');
  const admin = () => cluster.kubeConfig('admin@prod').makeApiClient(CustomObjectsApi);
  return {
    cluster,
    clock,
    admin,
    slack,
    ...(mount ? { mount } : {}),
    get app(): Glidepath {
      if (!app) throw new Error('Glidepath is not started yet (glidepathLater)');
      return app;
    },
    startGlidepath: startApp,
    async restartGlidepath() {
      await app?.close();
      app = undefined;
      return startApp();
    },
    deploy(name, version, releaseId, labels = LABELS, at = {}) {
      const image = `registry.example.com/shop/${name}:${version}`;
      const namespace = at.namespace ?? 'shop';
      if (!store.tryGet(rt(), namespace, name)) {
        store.create(rt(), namespace, rolloutManifest({ namespace, name, image, replicas: 2, steps: o.steps ?? [], labels, annotations: { ...at.annotations, 'hangar.io/release-id': releaseId } }));
        return;
      }
      store.mutate(rt(), namespace, name, (r) => {
        r.spec.template.spec.containers[0].image = image;
        r.metadata.annotations = { ...r.metadata.annotations, 'hangar.io/release-id': releaseId };
      });
    },
    async runFor(ms) {
      for (let t = 0; t < ms; t += 500) await clock.advance(500);
    },
    remove(name, namespace = 'shop') {
      store.delete(rt(), namespace, name);
    },
    async kubectlStatusPatch(name, status, namespace = 'shop') {
      await admin().patchNamespacedCustomObjectStatus(
        { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts', namespace, name, body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
    replies: () => slack.transcript.messages(o.channel).flatMap((m) => m.replies),
    async settled() {
      const idle = async (): Promise<boolean> => {
        const started = app;
        if (!started) return true;
        const [facts, writes] = await Promise.all([started.facts.counts(...NOW_STATES), started.slack?.queue?.getJobCounts(...NOW_STATES, 'delayed') ?? {}]);
        return [...Object.values(facts), ...Object.values(writes)].every((n) => n === 0);
      };
      // Twice, 200 ms apart: a fact heard from the watch meanwhile, or a reply the last job queued, shows up in between.
      const idleTwice = async (): Promise<boolean> => {
        if (!(await idle())) return false;
        await new Promise((r) => setTimeout(r, 200));
        return idle();
      };
      await waitFor(idleTwice, 'Glidepath idle (no fact, no Slack call pending)', 60_000);
    },
    async close() {
      await app?.close();
      await cluster.stop();
      await slack.close();
      await dropPrefix(env.REDIS_PREFIX);
    },
  };
}
