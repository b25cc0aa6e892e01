/**
 * An ApplicationSet pipeline followed with notifications off: a stand-in cluster running Argo CD,
 * the ApplicationSet controller (RollingSync in three steps) and Argo Rollouts, watched by a real
 * Glidepath (`facts: watch`), writing to the Slack stand-in. What Slack received is asserted:
 * without the fault the rows go Healthy in step order and the release is Complete only when every
 * row is; with the controller's stale cache (argo-cd#22558) step 3 runs before step 2 was synced,
 * and the thread says so as a failure, naming the step and the children, never Complete. It says
 * so once Argo CD's periodic refresh compared the step-2 child again after step 3 started (a
 * newer `status.reconciledAt`, still OutOfSync): before that, the child's last word predates the
 * start, which a delayed fact would look like too. Step membership is the ApplicationSet's, known
 * beside the records: a release opened after the ApplicationSet was heard shows each child in its
 * step's row from the first parent Slack receives, even when the ApplicationSet says nothing more,
 * and the release its children left stays Complete, each row counting its child as it left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REFRESH_ANNOTATION } from '../../sandbox/kube/controllers/argocd.js';
import { SimulatedGit, type DesiredManifests } from '../../sandbox/kube/controllers/git.js';
import type { MessageVersion, TranscriptMessage } from '../../sandbox/slack/transcript.js';
import { waitFor } from '../helpers/wait.js';
import { startWatchedWorld, type WatchedWorld } from '../helpers/watched-world.js';

const CHANNEL = 'C0APPSET';
const REPO = 'https://git.example.com/shop/deploy.git';
const TARGETS = ['staging', 'prod-eu', 'prod-us'];
const STAGES = TARGETS.map((t, i) => `{ name: ${t}, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: ${i + 1} } }`);

function tree(version: string): Record<string, DesiredManifests> {
  return Object.fromEntries(TARGETS.map((t) => [`checkout/${t}`, { rollouts: [{ name: `checkout-${t}`, image: `registry.example.com/shop/checkout:${version}`, steps: [] }] }]));
}

let world: WatchedWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function start(staleCache: string[] | false, options: { glidepathLater?: boolean } = {}): Promise<{ world: WatchedWorld; git: SimulatedGit; initial: string }> {
  const git = new SimulatedGit();
  const initial = git.commit(REPO, 'main', tree('1.28.0'));
  world = await startWatchedWorld({
    channel: CHANNEL,
    steps: [],
    pipeline: 'checkout-appset',
    stages: STAGES,
    // Argo CD's periodic refresh (timeout.reconciliation, 180 s by default) every 20 s, so that a test sees one.
    controllers: { argocd: [{ git, refreshDelayMs: 1000, reconcileEveryMs: 20_000, jitterMs: 0, syncDurationMs: 2000 }], appSet: { faults: { staleCache } } },
    ...options,
  });
  const { store } = world.cluster;
  store.create(store.registry.byKind('ApplicationSet'), 'argocd', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: 'checkout' },
    spec: {
      generators: [{ list: { elements: TARGETS.map((target) => ({ target })) } }],
      strategy: { type: 'RollingSync', rollingSync: { steps: TARGETS.map((t) => ({ matchExpressions: [{ key: 'target', operator: 'In', values: [t] }] })) } },
      template: {
        metadata: { name: 'checkout-{{target}}', labels: { target: '{{target}}', 'app.kubernetes.io/part-of': 'checkout' } },
        spec: {
          project: 'default',
          source: { repoURL: REPO, targetRevision: 'main', path: 'checkout/{{target}}' },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
          syncPolicy: { automated: { prune: true } },
        },
      },
    },
  });
  return { world, git, initial };
}

/** A commit, then every child refreshed (as Argo CD's git webhook does). */
async function release(w: WatchedWorld, git: SimulatedGit, version: string): Promise<string> {
  const sha = git.commit(REPO, 'main', tree(version));
  const apps = w.cluster.store.registry.byKind('Application');
  for (const t of TARGETS) w.cluster.store.patch(apps, 'argocd', `checkout-${t}`, 'merge', { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } });
  return sha;
}

/**
 * Advances the cluster a second at a time; after each, waits until Glidepath heard the
 * ApplicationSet as it is and Slack shows the release as its record says (the status, each row's,
 * and whether a row waits for confirmation): a person watching the thread sees every state the
 * release went through. (The writer renders the latest record, so a state not waited for here can
 * be skipped in Slack.)
 */
async function runCaughtUp(w: WatchedWorld, releaseId: string, seconds: number): Promise<void> {
  const appSets = w.cluster.store.registry.byKind('ApplicationSet');
  for (let i = 0; i < seconds; i++) {
    await w.runFor(1_000);
    const rv = Number(w.cluster.store.get(appSets, 'argocd', 'checkout').metadata.resourceVersion);
    await waitFor(async () => {
      const record = await w.app.store.get('checkout-appset', releaseId);
      if (record === undefined) return true;
      if (Number(record.appSets?.['prod/argocd/appset:checkout']?.resourceVersion ?? 0) < rv) return false;
      const shown = thread(w, releaseId);
      // The text has the status and each row's; a row waiting for confirmation says so in a line of its own.
      const waiting = record.stages.some((s) => s.stepProgress?.unconfirmed !== undefined);
      return (
        shown !== undefined &&
        shown.text.endsWith(` (checkout-appset): ${record.status}. ${record.stages.map((s) => `${s.name} ${s.status}`).join(', ')}`) &&
        JSON.stringify(shown.blocks).includes('waiting for confirmation') === waiting
      );
    }, `Glidepath and Slack caught up with ApplicationSet version ${rv}`);
  }
}

/** A reply's text as shown (its first section; the notification text is only its first line). */
const shownText = (m: TranscriptMessage): string => (m.blocks[0] as { text?: { text?: string } } | undefined)?.text?.text ?? m.text;
/** What the thread calls a `revision-<sha>` release: its short commit (then the image tags its children run). */
const nameOf = (releaseId: string): string => `commit ${releaseId.slice('revision-'.length, 'revision-'.length + 7)}`;
const thread = (w: WatchedWorld, releaseId: string): TranscriptMessage | undefined => w.slack.transcript.messages(CHANNEL).find((m) => m.text.startsWith(`Release ${nameOf(releaseId)} `));
const versions = (m: TranscriptMessage): MessageVersion[] => [...m.edits, { text: m.text, blocks: m.blocks, at: m.at }];

/** The release status and each row's status, from the parent's fallback text (`Release … (pipeline): Status. staging Healthy, …`). */
function parse(v: MessageVersion): { status: string; rows: Record<string, string> } {
  const m = /\): (\w+)\. (.*)$/.exec(v.text);
  if (!m) throw new Error(`unexpected parent text: ${v.text}`);
  return { status: m[1] as string, rows: Object.fromEntries((m[2] as string).split(', ').map((r) => r.split(' ') as [string, string])) };
}

describe('an ApplicationSet pipeline in the thread, with notifications off', () => {
  it('without the fault: rows go Healthy in step order, and the release is Complete only when every row is Healthy at its revision', async () => {
    const { world: w, git, initial } = await start(false);
    await w.runFor(30_000);
    // The first rollout: Glidepath heard the ApplicationSet, and the thread of that revision is Complete.
    await waitFor(async () => {
      const m = thread(w, `revision-${initial.slice(0, 12)}`);
      return m && parse(m).status === 'Complete' ? m : undefined;
    }, 'the first revision Complete in Slack');
    const sha = await release(w, git, '1.29.0');
    const releaseId = `revision-${sha.slice(0, 12)}`;
    await runCaughtUp(w, releaseId, 40);
    const parent = await waitFor(async () => {
      const m = thread(w, releaseId);
      return m && parse(m).status === 'Complete' ? m : undefined;
    }, 'the release Complete in Slack');
    const seen = versions(parent).map(parse);
    expect(seen.length).toBeGreaterThan(2);
    for (const v of seen) if (v.status === 'Complete') expect(Object.values(v.rows)).toEqual(['Healthy', 'Healthy', 'Healthy']);
    // Some versions were in between: a row Healthy, the release not.
    expect(seen.some((v) => v.status !== 'Complete' && Object.values(v.rows).includes('Healthy'))).toBe(true);
    const firstHealthy = TARGETS.map((t) => seen.findIndex((v) => v.rows[t] === 'Healthy'));
    expect(firstHealthy.every((i) => i >= 0)).toBe(true);
    expect([...firstHealthy].sort((a, b) => a - b)).toEqual(firstHealthy);
    const last = JSON.stringify(parent.blocks);
    expect(last).toContain(`step 3 of 3 · 1/1 Healthy at \`${sha.slice(0, 7)}\``);
    expect(parent.replies.map((r) => r.text).filter((t) => t.includes('out of order') || t.includes('started before'))).toEqual([]);
    await waitFor(async () => parent.replies.find((r) => r.text.includes(`Release \`${nameOf(releaseId)} (checkout:1.29.0)\` is complete`)), 'the release-complete reply');
    // Named as people know it: the short commit and the image tag its children run, never `revision-<hash>`.
    expect(parent.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: `Release commit ${sha.slice(0, 7)} (checkout:1.29.0) — checkout-appset`, emoji: false } });
    expect(versions(parent).every((v) => !v.text.includes('revision-'))).toBe(true);
    // The ApplicationSet was heard before this release opened: the first parent Slack received already
    // shows each row with the one child of its step, none as "membership not known".
    const first = JSON.stringify(versions(parent)[0]?.blocks);
    expect(first).not.toContain('membership not known');
    for (const [i, t] of TARGETS.entries()) expect(first).toMatch(new RegExp(`\\*${t}\\* — \\w+ · step ${i + 1} of 3 · [01]/1 Healthy at \`${sha.slice(0, 7)}\``));
    const record = await w.app.store.get('checkout-appset', releaseId);
    expect(record?.stages.map((s) => Object.keys(s.targets))).toEqual(TARGETS.map((t) => [`prod/argocd/app:checkout-${t}`]));
  }, 120_000);

  it('a release opened after the ApplicationSet was heard shows each row with its own step from the first parent, even when the ApplicationSet says nothing more (its controller down)', async () => {
    const { world: w, git, initial } = await start(false);
    await w.runFor(30_000);
    const before = `revision-${initial.slice(0, 12)}`;
    await waitFor(async () => {
      const m = thread(w, before);
      return m && parse(m).status === 'Complete' ? m : undefined;
    }, 'the first revision Complete in Slack');
    // The ApplicationSet controller stops (a restart, a crash loop): its status stays as it was, and no fact of it follows.
    w.cluster.appSet?.stop();
    const sha = await release(w, git, '1.29.0');
    const releaseId = `revision-${sha.slice(0, 12)}`;
    await w.runFor(5_000);
    const parent = await waitFor(async () => thread(w, releaseId), 'the new release in Slack');
    const first = JSON.stringify(versions(parent)[0]?.blocks);
    expect(first).not.toContain('membership not known');
    for (const [i, t] of TARGETS.entries()) expect(first).toMatch(new RegExp(`\\*${t}\\* — \\w+ · step ${i + 1} of 3 · 0/1 Healthy at \`${sha.slice(0, 7)}\``));
    const record = await w.app.store.get('checkout-appset', releaseId);
    expect(record?.stages.map((s) => Object.keys(s.targets))).toEqual(TARGETS.map((t) => [`prod/argocd/app:checkout-${t}`]));
    // The release its children left is still Complete, each row counting its child as it left.
    const old = await waitFor(async () => {
      const m = thread(w, before);
      return m && JSON.stringify(m.blocks).split(`moved on to \`${nameOf(releaseId)}\``).length - 1 === TARGETS.length ? m : undefined;
    }, 'the first release says its children moved on');
    expect(parse(old).status).toBe('Complete');
    for (const [i, t] of TARGETS.entries()) expect(JSON.stringify(old.blocks)).toMatch(new RegExp(`\\*${t}\\* — Healthy · step ${i + 1} of 3 · 1/1 Healthy at \`${initial.slice(0, 7)}\``));
  }, 120_000);

  it('Glidepath started after the world rolled out: the first parent Slack receives knows each step\'s member (the ApplicationSet listed before its children)', async () => {
    const { world: w, initial } = await start(false, { glidepathLater: true });
    // The first revision rolls out through its three steps with nobody watching.
    await w.runFor(30_000);
    const appSet = w.cluster.store.get(w.cluster.store.registry.byKind('ApplicationSet'), 'argocd', 'checkout');
    expect((appSet.status.applicationStatus as { status: string }[]).map((s) => s.status)).toEqual(['Healthy', 'Healthy', 'Healthy']);
    // The API server answers the ApplicationSet's list last (as a loaded one may): its children are listed first unless Glidepath waits.
    w.cluster.server.serveDelayMs = (r) => (r.verb === 'list' && r.resource === 'applicationsets' ? 500 : undefined);
    await w.startGlidepath();
    const releaseId = `revision-${initial.slice(0, 12)}`;
    const parent = await waitFor(async () => {
      const m = thread(w, releaseId);
      return m && parse(m).status === 'Complete' ? m : undefined;
    }, 'the release Complete in Slack');
    // Never a row without its step's member, from the first parent Slack received.
    for (const v of versions(parent)) expect(JSON.stringify(v.blocks)).not.toContain('not known');
    const first = JSON.stringify(versions(parent)[0]?.blocks);
    for (const [i, t] of TARGETS.entries()) expect(first).toMatch(new RegExp(`\\*${t}\\* — \\w+ · step ${i + 1} of 3 · [01]/1 Healthy at \`${initial.slice(0, 7)}\``));
  }, 120_000);

  it('with the stale-cache fault: the thread flags step 3 started before step 2, naming the children, and is never Complete', async () => {
    const { world: w, git } = await start(['checkout-prod-eu']);
    await w.runFor(30_000);
    const sha = await release(w, git, '1.29.0');
    const short = sha.slice(0, 7);
    const releaseId = `revision-${sha.slice(0, 12)}`;
    await runCaughtUp(w, releaseId, 45);
    // The cluster did run step 3 while step 2 never synced.
    const image = (t: string) => w.cluster.store.get(w.cluster.store.registry.byKind('Rollout'), 'shop', `checkout-${t}`).spec.template.spec.containers[0].image;
    expect(image('prod-us')).toBe('registry.example.com/shop/checkout:1.29.0');
    expect(image('prod-eu')).toBe('registry.example.com/shop/checkout:1.28.0');

    const reply = await waitFor(async () => thread(w, releaseId)?.replies.find((r) => r.text.includes('started before step 2')), 'the out-of-order reply');
    expect(shownText(reply)).toContain(`*prod-us* — \`prod/argocd/checkout\`: RollingSync step 3 of \`prod/argocd/checkout\` started before step 2 was Healthy at \`${short}\``);
    expect(shownText(reply)).toContain(`• \`checkout-prod-eu\` (step 2): Healthy targeting \`${short}\`; the Application is OutOfSync/Progressing at ${short}`);
    expect(shownText(reply)).toMatch(/• `checkout-prod-us` \(step 3\): \w+ targeting/);
    const parent = await waitFor(async () => {
      const m = thread(w, releaseId);
      return m && parse(m).status === 'Failed' ? m : undefined;
    }, 'the parent says Failed');
    expect(versions(parent).map(parse).some((v) => v.status === 'Complete')).toBe(false);
    // Before the refresh, the step-3 row waited for confirmation and nothing had failed.
    const shown = versions(parent);
    const waited = shown.findIndex((v) => JSON.stringify(v.blocks).includes(`waiting for confirmation: step 3 started before step 2 was seen Healthy at ${short}`));
    const failed = shown.findIndex((v) => parse(v).status === 'Failed');
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(waited).toBeLessThan(failed);
    expect(parse(parent).rows).toMatchObject({ staging: 'Healthy', 'prod-eu': 'Progressing', 'prod-us': 'Degraded' });
    expect(JSON.stringify(parent.blocks)).toContain(`:x: out of order: step 3 started before step 2 was Healthy at ${short}`);
    // Said once.
    expect(parent.replies.filter((r) => r.text.includes('started before step 2'))).toHaveLength(1);
  }, 120_000);
});
