/**
 * A Kargo project on the watched world (test/helpers/watched-world.ts): the Kargo simulator and
 * its webhooks, a Warehouse, Stages whose health follows an Argo CD Application each (set by the
 * test, as an autoscaler or a crash would), and a Glidepath following the `checkout-kargo`
 * pipeline with notifications off (`facts: watch`). Promotions are created as the cluster's admin
 * (create-actor `kubernetes:admin`); with `kargoApi`, a target-aware Stage is promoted through
 * Kargo's API stand-in (a PromotionRequest Kargo creates and fans out to the Targets). The thread
 * is read from the Slack stand-in.
 */
import type { KargoControllerOptions } from '../../sandbox/kube/controllers/kargo.js';
import { freightManifest, promotionRequest, stageManifest, targetManifest, warehouseManifest, type StageManifest } from '../../sandbox/kube/kargo-builders.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import type { TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { CI_TOKEN } from './glidepath.js';
import { startWatchedWorld, type WatchedWorld } from './watched-world.js';

export const PROJECT = 'kargo-checkout';
export const REPO = 'registry.example.com/shop/checkout';
export const KARGO_CHANNEL = 'C0KARGO';
/** A CI token bound to the checkout-kargo pipeline. */
export const KARGO_CI_TOKEN = CI_TOKEN;

const STAGES = [
  `{ name: dev, cluster: prod, kargo: { project: ${PROJECT}, stage: dev } }`,
  `{ name: staging, cluster: prod, kargo: { project: ${PROJECT}, stage: "glob:stag*" } }`,
  `{ name: prod, cluster: prod, kargo: { project: ${PROJECT}, selector: "tier=prod" } }`,
];
const pipeline = (stages: string[]): string => `
  - name: checkout-kargo
    channel: ${KARGO_CHANNEL}
    stages:
${stages.map((stage) => `      - ${stage}`).join('\n')}`;

export interface KargoWorld extends WatchedWorld {
  /** Creates a Freight of `checkout:<tag>` (with OCI annotations, e.g. a release id); returns its name. */
  freight(tag: string, alias: string, annotations?: Record<string, string>): string;
  /** A Stage with an Argo CD Application `checkout-<name>` it promotes to, Healthy. */
  stage(m: Omit<StageManifest, 'namespace' | 'warehouse' | 'apps'>): void;
  relabelStage(name: string, labels: Record<string, string>): void;
  deleteStage(name: string): void;
  /** Sets the health of the Stage's Application (Kargo recomputes the Stage's health from it). */
  appHealth(stage: string, status: 'Healthy' | 'Progressing' | 'Degraded'): void;
  /** `kargo promote` as the admin: a Promotion of `freight` to `stage`; returns the name Kargo gave it. */
  promote(stage: string, freight: string): Promise<string>;
  /** Kargo main: a Target of the project with these labels (a target-aware Stage selects it). */
  target(name: string, labels: Record<string, string>): void;
  /** `kargo promote` of a target-aware Stage as the admin, through Kargo's API (`kargoApi`); returns the PromotionRequest Kargo created. */
  promoteThroughApi(stage: string, freight: string): Promise<string>;
  /** Advances the cluster's clock until `done` holds (each step a chance for Glidepath to catch up). */
  until<T>(what: string, done: () => T | undefined | false | Promise<T | undefined | false>): Promise<T>;
  /** Thread parents of the Kargo channel whose header names the release. */
  thread(releaseId: string): TranscriptMessage | undefined;
  /** The parent's whole text (header, rows, context). */
  parentText(m: TranscriptMessage): string;
}

export interface KargoWorldOptions {
  kargo?: Omit<KargoControllerOptions, 'store' | 'clock'>;
  /** The checkout-kargo pipeline's stages, one YAML flow mapping each (default dev, staging by glob, prod by label). */
  stages?: string[];
  /** Kargo's API stand-in, and Glidepath configured with it (target-aware Stages). */
  kargoApi?: boolean;
  /** Glidepath's `unhealthyGraceMinutes` (default 0). */
  unhealthyGraceMinutes?: number;
  /** More settings, as YAML flow entries (`stallAfterMinutes: 0.05`). */
  settings?: string;
}

export async function startKargoWorld(options: KargoWorldOptions = {}): Promise<KargoWorld> {
  const world = await startWatchedWorld({
    channel: KARGO_CHANNEL,
    namespaces: ['argocd', PROJECT],
    kargo: { stepDurationMs: 200, ...options.kargo },
    ...(options.kargoApi ? { kargoApi: true } : {}),
    pipelines: pipeline(options.stages ?? STAGES),
    settings: `unhealthyGraceMinutes: ${options.unhealthyGraceMinutes ?? 0}${options.settings ? `, ${options.settings}` : ''}`,
    env: { CI_TOKENS: `checkout-kargo=${KARGO_CI_TOKEN}` },
  });
  const { store } = world.cluster;
  const k = (kind: string) => store.registry.byKind(kind, 'kargo.akuity.io');
  const apps = () => store.registry.byKind('Application', 'argoproj.io');
  store.create(k('Warehouse'), PROJECT, warehouseManifest(PROJECT, 'checkout', REPO));

  const appHealth = (stage: string, status: string): void => {
    store.mutate(apps(), 'argocd', `checkout-${stage}`, (a) => {
      a.status = { health: { status }, sync: { status: 'Synced', revision: 'abc1234' } };
    });
  };
  const parentText = (m: TranscriptMessage): string =>
    (m.blocks as { text?: { text?: string }; elements?: { text?: string }[] }[]).map((b) => [b.text?.text ?? '', ...(b.elements ?? []).map((e) => e.text ?? '')].join('\n')).join('\n');

  return {
    ...world,
    freight(tag, alias, annotations) {
      return store.create(k('Freight'), PROJECT, freightManifest(PROJECT, 'checkout', { repoURL: REPO, tag, ...(annotations ? { annotations } : {}) }, alias)).metadata.name;
    },
    stage(m) {
      store.create(apps(), 'argocd', {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: `checkout-${m.name}` },
        spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: `shop-${m.name}` } },
      });
      appHealth(m.name, 'Healthy');
      store.create(k('Stage'), PROJECT, stageManifest({ ...m, namespace: PROJECT, warehouse: 'checkout', apps: [{ name: `checkout-${m.name}` }] }));
    },
    relabelStage(name, labels) {
      store.mutate(k('Stage'), PROJECT, name, (s) => void (s.metadata.labels = labels));
    },
    deleteStage(name) {
      store.delete(k('Stage'), PROJECT, name);
    },
    appHealth,
    async promote(stage, freight) {
      const body = promotionRequest(PROJECT, stage, freight);
      const created = (await world.admin().createNamespacedCustomObject({ group: 'kargo.akuity.io', version: 'v1alpha1', namespace: PROJECT, plural: 'promotions', body })) as KubeObject;
      return created.metadata.name;
    },
    target(name, labels) {
      store.create(k('Target'), PROJECT, targetManifest(PROJECT, name, labels));
    },
    async promoteThroughApi(stage, freight) {
      const api = world.cluster.kargoApi;
      if (!api) throw new Error('startKargoWorld({ kargoApi: true }) runs Kargo\'s API');
      const res = await fetch(`${api.url}/v1beta1/projects/${PROJECT}/stages/${stage}/promotions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer admin-token' },
        body: JSON.stringify({ freight }),
      });
      const body = (await res.json()) as KubeObject & { error?: string };
      if (res.status !== 201) throw new Error(`Kargo's API answered ${res.status}: ${body.error ?? JSON.stringify(body)}`);
      return body.metadata.name;
    },
    async until(what, done) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const value = await done();
        if (value !== undefined && value !== false) return value;
        if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}; the Kargo channel says:\n${world.slack.transcript.messages(KARGO_CHANNEL).map(parentText).join("\n---\n")}`);
        await world.clock.advance(100);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    thread(releaseId) {
      // By the release the writer put in the message's metadata, or by the name its header shows (a CI id it was announced as).
      return world.slack.transcript
        .messages(KARGO_CHANNEL)
        .find((m) => m.metadata?.event_payload.release === releaseId || JSON.stringify(m.blocks).includes(`Release ${releaseId} — checkout-kargo`));
    },
    parentText,
  };
}
