/**
 * Argo CD and the ApplicationSet controller played by hand on the stand-in API server: each
 * write is one object change Glidepath's watch hears over HTTP, as the real controllers would
 * make it, so a test can set up exactly the states the simulators never reach on their own (a
 * health that lags the sync, a status compared against the previous spec, a child per source).
 * Times are the cluster clock's (seconds, as the controllers write them); every write is a second
 * after the one before, so that each object time is distinct.
 */
import { isoSeconds } from '../../sandbox/kube/clock.js';
import type { KubeObject } from '../../sandbox/kube/object.js';
import { startWatchedWorld, type WatchedWorld } from './watched-world.js';
import { waitFor } from './wait.js';

export const NS = 'argocd';
export const APPSET = 'checkout';

/** The scripted ApplicationSet's three RollingSync steps, one child each, and the stages that show them. */
export const STEPS = [['checkout-dev'], ['checkout-staging'], ['checkout-prod']];
export const ROWS = ['dev', 'staging', 'prod'];
export const REPO = 'https://git.example.com/shop/deploy.git';
export const VALUES = 'https://git.example.com/shop/values.git';
export const CHARTS = 'https://charts.example.com';
/** A 40-hex commit made of one repeated pattern, so a test's revisions read apart at a glance. */
export const sha = (c: string): string => c.repeat(40).slice(0, 40);

/** A watched world whose pipeline shows the scripted ApplicationSet's steps as stages, and the hand that plays Argo CD in it. */
export async function startScriptedAppSet(options: { channel: string; pipeline: string; env?: Record<string, string> }): Promise<{ w: WatchedWorld; argo: ScriptedArgoCd }> {
  const w = await startWatchedWorld({
    channel: options.channel,
    steps: [],
    pipeline: options.pipeline,
    stages: ROWS.map((r, i) => `{ name: ${r}, cluster: prod, applicationSet: { namespace: ${NS}, name: ${APPSET}, step: ${i + 1} } }`),
    ...(options.env ? { env: options.env } : {}),
  });
  // The story starts once Glidepath watches: a child it first hears mid-change (its Applications
  // listed after the script moved some of them) is not the settled world the script wrote. Held
  // lease alone is not enough: the Applications list after the ApplicationSets (list-order.ts).
  await waitFor(async () => {
    const counts = w.app.watchSource?.counts('prod');
    return counts && counts.scopes > 0 && counts.watching === counts.scopes ? counts : undefined;
  }, 'Glidepath watching every scope of the cluster', 30_000);
  return { w, argo: new ScriptedArgoCd(w, STEPS) };
}

export interface Source {
  repoURL: string;
  targetRevision: string;
  path?: string;
  chart?: string;
}

export interface ChildSpec {
  /** One source, or several (a multi-source Application). */
  sources: Source[];
  releaseId?: string;
}

type EntryStatus = 'Waiting' | 'Pending' | 'Progressing' | 'Healthy';

const specSources = (sources: Source[]): Record<string, unknown> => (sources.length === 1 ? { source: sources[0] } : { sources });
const syncRevisions = (revisions: string[]): Record<string, unknown> => (revisions.length === 1 ? { revision: revisions[0] } : { revision: revisions[0], revisions });

export class ScriptedArgoCd {
  private readonly entries = new Map<string, { status: EntryStatus; step: string; targetRevisions: string[]; lastTransitionTime: string }>();

  constructor(
    private readonly world: WatchedWorld,
    /** Child names per RollingSync step, 1-based order. */
    readonly steps: string[][],
  ) {}

  private get store() {
    return this.world.cluster.store;
  }
  private get apps() {
    return this.store.registry.byKind('Application');
  }
  private get appSets() {
    return this.store.registry.byKind('ApplicationSet');
  }
  now(): string {
    return isoSeconds(this.world.clock.now());
  }
  /** A second passes on the cluster's clock (and Glidepath hears what was written). */
  async tick(): Promise<void> {
    await this.world.runFor(1000);
  }

  /** The settled world before the change: each child Synced and Healthy (or `health`) at `revisions`, its entry Healthy. */
  async settle(children: Record<string, ChildSpec & { revisions: string[]; health?: string }>): Promise<void> {
    const at = this.now();
    const stepOf = (n: string) => String(this.steps.findIndex((s) => s.includes(n)) + 1);
    this.store.create(this.appSets, NS, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: APPSET },
      // Generators and template as the CRD requires; nothing generates here (the test writes the children).
      spec: {
        generators: [{ list: { elements: [] } }],
        template: { metadata: { name: '{{name}}' }, spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } } },
        strategy: { type: 'RollingSync', rollingSync: { steps: this.steps.map((_, i) => ({ matchExpressions: [{ key: 'step', operator: 'In', values: [String(i + 1)] }] })) } } },
    } as KubeObject);
    for (const [name, c] of Object.entries(children)) {
      const spec = { project: 'default', ...specSources(c.sources), destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } };
      this.store.create(this.apps, NS, {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: {
          name,
          labels: { step: stepOf(name) },
          annotations: c.releaseId ? { 'hangar.io/release-id': c.releaseId } : {},
          ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: APPSET, uid: this.store.get(this.appSets, NS, APPSET).metadata.uid!, controller: true }],
        },
        spec,
        status: {
          sync: { status: 'Synced', ...syncRevisions(c.revisions), comparedTo: { ...specSources(c.sources), destination: spec.destination } },
          health: { status: c.health ?? 'Healthy', lastTransitionTime: at },
          reconciledAt: at,
        },
      } as KubeObject);
      this.entries.set(name, { status: c.health === undefined || c.health === 'Healthy' ? 'Healthy' : 'Progressing', step: stepOf(name), targetRevisions: c.revisions, lastTransitionTime: at });
    }
    this.writeEntries();
    await this.tick();
  }

  private writeEntries(): void {
    const applicationStatus = [...this.entries].sort(([a], [b]) => a.localeCompare(b)).map(([application, e]) => ({ application, message: `${application} is ${e.status}`, ...e }));
    this.store.mutate(this.appSets, NS, APPSET, (o) => void (o.status = { ...o.status, applicationStatus }), { subresource: 'status' });
  }

  /** The ApplicationSet controller writes its status: each named child's entry changes (its lastTransitionTime with it). */
  async entry(changes: Record<string, { status: EntryStatus; targetRevisions?: string[] }>): Promise<void> {
    for (const [name, c] of Object.entries(changes)) {
      const prev = this.entries.get(name)!;
      this.entries.set(name, { ...prev, status: c.status, ...(c.targetRevisions ? { targetRevisions: c.targetRevisions } : {}), lastTransitionTime: this.now() });
    }
    this.writeEntries();
    await this.tick();
  }

  private mutateApp(name: string, change: (a: KubeObject) => void): void {
    this.store.mutate(this.apps, NS, name, change);
  }

  /** The ApplicationSet controller writes a new spec (a template change): Argo CD has not compared it yet. */
  async specChange(name: string, c: ChildSpec): Promise<void> {
    this.mutateApp(name, (a) => {
      delete a.spec.source;
      delete a.spec.sources;
      Object.assign(a.spec, specSources(c.sources));
      a.metadata.annotations = { ...a.metadata.annotations, ...(c.releaseId ? { 'hangar.io/release-id': c.releaseId } : {}) };
    });
    await this.tick();
  }

  /** Argo CD compares the child's current spec: at `revisions`, OutOfSync (or Synced when nothing changed there). */
  async compare(name: string, revisions: string[], sync: 'OutOfSync' | 'Synced' = 'OutOfSync'): Promise<void> {
    const at = this.now();
    this.mutateApp(name, (a) => {
      const sources = a.spec.sources ?? [a.spec.source];
      a.status.sync = { status: sync, ...syncRevisions(revisions), comparedTo: { ...specSources(sources), destination: a.spec.destination } };
      a.status.reconciledAt = at;
    });
    await this.tick();
  }

  /** A sync of the child's compared revisions: Running, then Succeeded, Synced and Progressing (a full comparison ends it). */
  async sync(name: string): Promise<void> {
    const startedAt = this.now();
    this.mutateApp(name, (a) => {
      a.status.operationState = { phase: 'Running', startedAt, message: 'one or more tasks are running', operation: { initiatedBy: { username: 'applicationset-controller', automated: true } } };
    });
    await this.tick();
    const at = this.now();
    this.mutateApp(name, (a) => {
      const revisions: string[] = a.status.sync.revisions ?? [a.status.sync.revision];
      a.status.operationState = { ...a.status.operationState, phase: 'Succeeded', finishedAt: at, message: 'successfully synced', syncResult: syncRevisions(revisions) };
      a.status.sync = { ...a.status.sync, status: 'Synced' };
      a.status.health = { status: 'Progressing', lastTransitionTime: at };
      a.status.reconciledAt = at;
    });
    await this.tick();
  }

  /** A health change alone (a partial reconcile: reconciledAt stays). */
  async health(name: string, status: string): Promise<void> {
    const at = this.now();
    this.mutateApp(name, (a) => void (a.status.health = { status, lastTransitionTime: at }));
    await this.tick();
  }

  /** One RollingSync step as the controller runs it when nothing goes wrong: Pending, a sync, Progressing, Healthy. */
  async runStep(step: number, targetRevisions: Record<string, string[]>): Promise<void> {
    const names = this.steps[step - 1]!;
    await this.entry(Object.fromEntries(names.map((n) => [n, { status: 'Pending' as const, targetRevisions: targetRevisions[n] }])));
    for (const n of names) await this.sync(n);
    await this.entry(Object.fromEntries(names.map((n) => [n, { status: 'Progressing' as const }])));
    for (const n of names) await this.health(n, 'Healthy');
    await this.entry(Object.fromEntries(names.map((n) => [n, { status: 'Healthy' as const }])));
  }
}
