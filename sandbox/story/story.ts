/**
 * The sandbox's story, played at a pace a person can read: the world as it is (rel-1.28.0
 * everywhere), a release through dev → staging → prod with canaries paused for approval, the
 * ApplicationSet's gated last step caught stale by the freshness gate, a Kargo promotion, a bad
 * build's inconclusive analysis charted and aborted, and a lost notification turned into a stall alert and then recovered. Every line
 * it prints names the release it is about.
 */
import { APPROVE_ACTION_ID, REFRESH_APPROVE_ACTION_ID } from '../../src/slack/buttons.js';
import type { ServedRequest } from '../kube/server.js';
import type { AnalysisOutcome } from '../kube/controllers/rollout-analysis.js';
import type { SampleWorld } from '../kube/world.js';
import type { SlackStandIn } from '../slack/server.js';
import { messageTarget, type Actor, type ClickTarget } from './actor.js';
import type { Decisions } from './decisions.js';
import type { GlidepathView } from './glidepath-view.js';
import type { PrintedButton } from './printer.js';


/** The bad build of chapter 5: its pods start, but it fails a growing share of checkouts. */
export const BAD_BUILD = '1.30.0';

/** The bad build's success rate, one measurement after the other (Prometheus vectors as text). */
const BAD_BUILD_SUCCESS = [0.99, 0.97, 0.95, 0.94, 0.92];

/**
 * The canary analysis of the clusters (startSampleWorld's analysisOutcome): the bad build's success
 * rate falls measurement by measurement to 0.92, under the success condition (>= 0.95) yet above
 * the failure one (< 0.9), so the analysis is inconclusive and the Rollout waits for a person, with
 * the measurements Glidepath draws as a chart; every other build passes.
 */
export const storyAnalysis: AnalysisOutcome = (rollout) => {
  const images = ((rollout.spec?.template?.spec?.containers ?? []) as { image?: string }[]).map((c) => c.image ?? '');
  if (!images.some((i) => i.endsWith(`:${BAD_BUILD}`))) return { phase: 'Successful' };
  return { phase: 'Inconclusive', values: BAD_BUILD_SUCCESS.map((v) => `[${v}]`) };
};

/** A reply about an inconclusive analysis: its Approve is not a canary approval, the story's abort decides it. */
function inconclusiveReply(message: { text: string; blocks: unknown[] }): boolean {
  return /inconclusive/i.test(`${message.text} ${JSON.stringify(message.blocks)}`);
}

/** The least wall-clock time the story waits for something before it says it did not happen. */
const MIN_WAIT_WALL_MS = 30_000;
export interface StoryDeps {
  world: SampleWorld;
  slack: SlackStandIn;
  glidepath: GlidepathView;
  actor: Actor;
  /** Holds the story at each decision until you (or, with --auto, the sandbox) make it. */
  decisions: Decisions;
  /** The page's name of a channel, for "in #checkout-releases". */
  channelName: (id: string) => string;
  /** CI announcing a release (POST /v1/releases with the CI token). */
  announce: (releaseId: string, version: string) => Promise<void>;
  say: (line: string) => void;
  /** Waits this many story milliseconds (shortened by the speed). */
  sleep: (ms: number) => Promise<void>;
  channels: Record<'checkout' | 'checkoutAppSet' | 'checkoutKargo', string>;
}

export class Story {
  constructor(private readonly d: StoryDeps) {}

  /** Called by the printer loop with every button that appeared: each Approve is a decision the story waits for. */
  onButtons(buttons: PrintedButton[]): void {
    for (const b of buttons) {
      if (b.actionId !== APPROVE_ACTION_ID || inconclusiveReply(b.message)) continue;
      void this.approval(b).catch((err: unknown) => this.d.say(`  ${b.releaseId} · (could not click Approve: ${err instanceof Error ? err.message : String(err)})`));
    }
  }

  private async approval(b: PrintedButton): Promise<void> {
    const current = () => this.d.slack.transcript.find(b.channel, b.message.ts);
    const rollout = /`([^`]+)` is paused/.exec(JSON.stringify(b.message.blocks))?.[1] ?? 'a canary';
    const [cluster, namespace, name] = rollout.split('/');
    const server = cluster === 'dev' || cluster === 'prod' ? this.d.world.clusters[cluster].server : undefined;
    const before = new Set(server?.writes);
    await this.d.decisions.wait({
      releaseId: b.releaseId,
      what: `${b.pipeline}: ${rollout} waits for approval`,
      inPage: `click Approve on its reply in the thread of ${b.releaseId} in #${this.d.channelName(b.channel)}`,
      byEnter: 'approve it from here',
      // Decided once the button is gone (someone clicked it, or the reply was replaced).
      decided: () => {
        const now = current();
        return !now?.blocks.some((x) => (x as { type?: string }).type === 'actions' && JSON.stringify(x).includes(APPROVE_ACTION_ID));
      },
      act: async (by) => {
        const now = current();
        if (now) await this.d.actor.click(by, b.releaseId, messageTarget(now), { actionId: APPROVE_ACTION_ID, value: b.value, label: 'Approve' });
      },
    });
    if (server) await this.sentAsPerson(b.releaseId, cluster!, () => server.writes.find((w) => !before.has(w) && w.subject.impersonatedBy !== undefined && w.namespace === namespace && w.name === name));
  }

  /**
   * Says who the cluster served an approve as, when Glidepath sent it as the person (a cluster with
   * `authorization: both`): the stand-in API server's record of the write, as an audit log has it.
   * Clusters whose writes are Glidepath's own have no such write: nothing is said.
   */
  private async sentAsPerson(releaseId: string, cluster: string, write: () => ServedRequest | undefined): Promise<void> {
    // Wall-clock time: the write follows the click in machine time, whatever the story's speed.
    for (const started = Date.now(); Date.now() - started < MIN_WAIT_WALL_MS; ) {
      const w = write();
      if (w) {
        const groups = w.subject.groups.length > 0 ? `, groups ${w.subject.groups.join(', ')}` : '';
        this.d.say(`  ${releaseId} · ${cluster}'s API server served the approve as ${w.subject.user}${groups} (impersonated by ${w.subject.impersonatedBy}, Glidepath's account): ${w.verb} ${w.resource} ${w.namespace}/${w.name}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Whether a response_url answer since `from` says what `test` looks for. */
  private answeredSince(from: number, test: RegExp): boolean {
    return this.d.slack.transcript.responses.slice(from).some((r) => test.test(JSON.stringify(r.body)));
  }

  /** A /glidepath command you type in the page (or Enter types for you), as a decision. */
  private typed(releaseId: string, channel: string, what: string, text: string, decided: () => Promise<boolean> | boolean): Promise<unknown> {
    return this.d.decisions.wait({
      releaseId,
      what,
      inPage: `type /glidepath ${text} in #${this.d.channelName(channel)}`,
      byEnter: 'type it for you',
      decided,
      act: async (by) => void (await this.d.actor.command(by, releaseId, channel, text)),
    });
  }

  /** Polls until `check` holds (story time); says so and goes on when it does not within `withinMs`. */
  /** The ApplicationSet moved `child` (its lastTransitionTime) after Argo CD last reconciled it: what the freshness gate refuses. */
  private notReconciledSinceTransition(child: string): boolean {
    const prod = this.d.world.clusters.prod;
    const appSet = prod.store.tryGet(prod.registry.byKind('ApplicationSet'), 'argocd', 'checkout');
    const entry = (appSet?.status?.applicationStatus ?? []).find((e: { application: string }) => e.application === child) as { lastTransitionTime?: string } | undefined;
    const reconciledAt = prod.store.tryGet(prod.registry.byKind('Application'), 'argocd', child)?.status?.reconciledAt as string | undefined;
    return entry?.lastTransitionTime !== undefined && reconciledAt !== undefined && reconciledAt < entry.lastTransitionTime;
  }

  private async until(releaseId: string, what: string, check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
    const step = 500;
    // Glidepath answers in machine time, not story time: at a high --speed on a busy machine a
    // minute of story is two seconds, so the story never gives up before MIN_WAIT_WALL_MS too.
    const started = Date.now();
    // Time spent waiting for you does not count: the story holds, it does not give up on you.
    for (let waited = 0; waited <= withinMs || Date.now() - started < MIN_WAIT_WALL_MS; waited += this.d.decisions.waiting ? 0 : step) {
      if (await check().catch(() => false)) return true;
      await this.d.sleep(step);
    }
    this.d.say(`  ${releaseId} · (${what} did not happen within ${Math.round(withinMs / 1000)} story seconds; the story goes on)`);
    return false;
  }

  private async status(pipeline: string, releaseId: string): Promise<string | undefined> {
    return (await this.d.glidepath.release(pipeline, releaseId))?.status;
  }

  async play(): Promise<void> {
    const { say } = this.d;
    say(`Chapter 1 · rel-1.28.0 · the world as it is
  checkout 1.28.0 runs in dev, staging, prod-eu and prod-us. Glidepath watches it through three
  pipelines over the SAME Rollouts: "checkout" (Rollouts by label), "checkout-appset" (the
  ApplicationSet that drives staging → prod-eu → prod-us, one RollingSync step after the other,
  the last one gated) and "checkout-kargo" (Kargo stages). "ledger" is a service of its own.
  A release therefore shows up in each of them; its prod stages move only when the ApplicationSet
  lets them.`);
    await this.until('rel-1.28.0', 'rel-1.28.0 Complete in checkout', async () => (await this.status('checkout', 'rel-1.28.0')) === 'Complete', 600_000);
    say(`✓ rel-1.28.0 · Complete in checkout: every stage is healthy at 1.28.0`);

    await this.release129();
    await this.kargoPromotion();
    await this.badImage();
    await this.lostNotification();
    say(`The end · the story is over; the clusters and Glidepath keep running. Try /glidepath status in a channel, or kubectl (see above).`);
  }

  private async release129(): Promise<void> {
    const { say } = this.d;
    const id = 'rel-1.29.0';
    say(`\nChapter 2 · ${id} · a release through dev → staging → prod
  CI announces ${id}; Argo CD syncs it to dev and staging, where the canary stops at 20% and waits
  for a person: click Approve in the page, or press Enter here (with --auto the sandbox does it).`);
    await this.d.announce(id, '1.29.0');
    this.d.world.releaseCheckout('1.29.0', id);
    const eu = await this.until(id, 'prod-eu healthy at 1.29.0', async () => {
      const r = await this.d.glidepath.release('checkout', id);
      return r?.stages.find((s) => s.name === 'prod-eu')?.healthyAt !== undefined;
    }, 900_000);
    if (eu) say(`✓ ${id} · dev, staging and prod-eu are healthy; prod-us is the ApplicationSet's gated step: it waits for /glidepath approve`);

    say(`\nChapter 3 · ${id} · the freshness gate
  The ApplicationSet controller's cache of checkout-prod-us goes stale (argo-cd's stale-cache
  fault). Approving the gated step now would act on an old view: Glidepath refuses and lists why.`);
    // The controller's stale view makes a transition that checkout-prod-us was not reconciled after;
    // Argo CD's application controller is behind on it, so it stays so while the story waits for you.
    const argocd = this.d.world.clusters.prod.argocd[0]!;
    this.d.world.appSet.faults.staleCache = ['checkout-prod-us'];
    argocd.faults.behind = ['checkout-prod-us'];
    // The fault shows once the ApplicationSet controller next judges prod-us on its stale view (a
    // transition checkout-prod-us was not reconciled after); on a busy machine that came after the approve.
    await this.until(id, 'the stale view of checkout-prod-us', async () => this.notReconciledSinceTransition('checkout-prod-us'), 60_000);
    const channel = this.d.channels.checkoutAppSet;
    const approveText = 'approve checkout-appset@prod-us';
    // Refused either way the gate sees it: children not fresh since the last transition, or a step judged on a stale cache.
    const refusal = /stale|not fresh/i;
    const from = this.d.slack.transcript.responses.length;
    await this.typed(id, channel, 'prod-us, the gated step, waits for /glidepath approve', approveText, () => this.answeredSince(from, /stale|not fresh|RollingSync step/i));
    // The answer may come after the command returns (the machine is busy): wait for it in what Slack received.
    if (await this.until(id, 'the refusal', async () => this.answeredSince(from, refusal), 60_000)) say(`✓ ${id} · the freshness gate refused to approve on stale state`);
    this.d.world.appSet.faults.staleCache = false;
    argocd.faults.behind = [];
    const responses = this.d.slack.transcript.responses;
    let index = responses.length - 1;
    while (index >= from && !JSON.stringify(responses[index]!.body.blocks ?? []).includes(REFRESH_APPROVE_ACTION_ID)) index--;
    const refused = index >= from ? responses[index]! : undefined;
    const value = refused ? buttonValue(refused.body.blocks as unknown[], REFRESH_APPROVE_ACTION_ID) : undefined;
    if (refused && value) {
      say(`  ${id} · the controllers caught up (the cache is fresh, Argo CD reconciles checkout-prod-us again): Refresh and approve can go through`);
      // The refusal is an answer only its person sees (a response_url answer): clicked as the page clicks it.
      const target: ClickTarget = { key: `r:${index}`, channel, messageTs: '0000000000.000000', text: String(refused.body.text ?? ''), blocks: refused.body.blocks as unknown[], ephemeral: refused.body.response_type !== 'in_channel' };
      await this.d.decisions.wait({
        releaseId: id,
        what: 'the refusal offers Refresh and approve',
        inPage: `click Refresh and approve under the refusal in #${this.d.channelName(channel)}`,
        byEnter: 'click it for you',
        decided: () => this.answeredSince(index + 1, /approved RollingSync step|Refreshing \d+ stale|Not fresh|may not/),
        act: async (by) => void (await this.d.actor.click(by, id, target, { actionId: REFRESH_APPROVE_ACTION_ID, value, label: 'Refresh and approve' })),
      });
    } else {
      const again = this.d.slack.transcript.responses.length;
      await this.typed(id, channel, 'prod-us waits for /glidepath approve again (no Refresh and approve came)', approveText, () => this.answeredSince(again, /RollingSync step/));
    }
    if (await this.until(id, `${id} Complete`, async () => (await this.status('checkout', id)) === 'Complete', 900_000)) {
      say(`✓ ${id} · Complete in checkout: every stage is healthy at 1.29.0`);
    }
  }

  private async kargoPromotion(): Promise<void> {
    const id = 'brave-lynx (1.29.0)';
    this.d.say(`\nChapter 4 · Kargo freight ${id} · a promotion
  Kargo's warehouse has freight brave-lynx (checkout 1.29.0). You promote it to the dev stage; the
  watch follows the Promotion in the release thread of brave-lynx (one thread per release).`);
    const channel = this.d.channels.checkoutKargo;
    const from = this.d.slack.transcript.responses.length;
    await this.typed(id, channel, 'brave-lynx waits to be promoted to dev', 'promote checkout-kargo@dev --freight brave-lynx', () => this.answeredSince(from, /Promotion/));
    // The release thread of the Freight (from the watch), not a thread of the command's: dev Healthy there.
    const healthy = await this.until(id, 'dev healthy in the release thread of brave-lynx', async () => {
      const release = (await this.d.glidepath.releases('checkout-kargo')).find((r) =>
        r.stages.some((s) => s.name === 'dev' && Object.values(s.targets).some((t) => t.kargo?.freight?.alias === 'brave-lynx')),
      );
      const thread = release && this.d.slack.transcript.messages(channel).find((m) => m.metadata?.event_payload.release === release.releaseId);
      return thread?.replies.some((r) => JSON.stringify(r.blocks).includes('*dev* is Healthy')) === true;
    }, 300_000);
    if (healthy) this.d.say(`✓ ${id} · promoted to the dev stage: its release thread shows the Promotion Succeeded and dev Healthy, with a Promote button toward staging`);
  }

  private async badImage(): Promise<void> {
    const { say } = this.d;
    const id = 'rel-1.30.0';
    say(`\nChapter 5 · ${id} · a bad image
  CI announces ${id}, a build that fails a growing share of checkouts. On dev its canary is
  approved at 20% like any other; at 50% the success-rate analysis measures the fall and cannot
  call it (between its success and failure conditions): the canary waits for a person, and
  Glidepath posts the measurements as a chart in the thread. You abort it.`);
    await this.d.announce(id, BAD_BUILD);
    this.d.world.releaseCheckout(BAD_BUILD, id, { paths: ['checkout/dev'] });
    const stuck = await this.until(id, 'the inconclusive analysis reported', async () => {
      const r = await this.d.glidepath.release('checkout', id);
      return r?.stages.some((s) => Object.values(s.targets).some((t) => t.pause?.reason === 'InconclusiveAnalysisRun')) === true;
    }, 900_000);
    if (stuck) say(`✓ ${id} · dev's analysis is inconclusive: the success rate fell to ${BAD_BUILD_SUCCESS.at(-1)} (it passes at 0.95); the canary waits for a person`);
    const thread = () => this.d.slack.transcript.messages(this.d.channels.checkout).find((m) => m.metadata?.event_payload.release === id);
    const chart = () => thread()?.replies.flatMap((r) => r.files ?? []).find((f) => f.name !== 'release-timeline.png');
    if (await this.until(id, 'the analysis chart', async () => chart() !== undefined, 120_000)) {
      say(`✓ ${id} · the analysis chart is in the thread: ${chart()!.title} (the page draws it)`);
    }
    const views = this.d.slack.transcript.openedViews.length;
    const aborted = async () => (await this.status('checkout', id)) === 'Aborted';
    const opened = () => (this.d.slack.transcript.openedViews.length > views ? this.d.actor.abortDialog() : undefined);
    await this.typed(id, this.d.channels.checkout, 'dev waits after an inconclusive analysis: abort the canary', 'abort dev/shop/checkout-dev', async () => opened() !== undefined || (await aborted()));
    if (await this.until(id, 'the Abort dialog', async () => opened() !== undefined, 60_000)) {
      const dialog = opened()!;
      await this.d.decisions.wait({
        releaseId: id,
        what: 'the Abort dialog asks to confirm',
        inPage: `press Abort in the dialog over #${this.d.channelName(this.d.channels.checkout)}`,
        byEnter: 'press it for you',
        // Decided when the page no longer shows it: submitted (Abort) or closed (Cancel).
        decided: async () => !this.d.actor.dialogOpen(dialog) || (await aborted()),
        act: async (by) => void (await this.d.actor.confirmAbort(by, id)),
      });
    }
    if (await this.until(id, `${id} Aborted`, async () => (await this.status('checkout', id)) === 'Aborted', 300_000)) {
      say(`✓ ${id} · Aborted: dev went back to the stable 1.29.0 pods`);
    }
  }

  private async lostNotification(): Promise<void> {
    const { say } = this.d;
    const id = 'rel-1.30.1';
    say(`\nChapter 6 · ${id} · a lost notification
  CI announces ${id} (the fixed image) for dev, but dev's notifications stop reaching Glidepath
  (the receiver is down). Glidepath hears nothing and, after a while, says the release stalled.`);
    const engines = this.d.world.clusters.dev.notifications;
    for (const e of engines) e.faults.receiverDown = true;
    await this.d.announce(id, '1.30.1');
    this.d.world.releaseCheckout('1.30.1', id, { paths: ['checkout/dev'] });
    const stalled = await this.until(id, 'the stall alert', async () => (await this.d.glidepath.release('checkout', id))?.stall !== undefined, 900_000);
    if (stalled) say(`✓ ${id} · stall alert: nothing heard from the release for too long`);
    for (const e of engines) e.faults.receiverDown = false;
    say(`  ${id} · the receiver is back; the next resync of dev's notifications reaches Glidepath`);
    const heard = await this.until(id, 'heard again', async () => {
      const r = await this.d.glidepath.release('checkout', id);
      return r !== undefined && r.stall === undefined && r.events.some((e) => e.kind === 'heard-again');
    }, 900_000);
    if (heard) say(`✓ ${id} · heard again: the release is back on track`);
  }
}

function buttonValue(blocks: unknown[], actionId: string): string | undefined {
  for (const b of blocks as { type?: string; elements?: { action_id?: string; value?: string }[] }[]) {
    const e = b.elements?.find((x) => x.action_id === actionId);
    if (e?.value) return e.value;
  }
  return undefined;
}
