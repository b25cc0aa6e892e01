/**
 * The sandbox's story, played at a pace a person can read: the world as it is (rel-1.28.0
 * everywhere), a release through dev → staging → prod with canaries paused for approval, the
 * ApplicationSet's gated last step caught stale by the freshness gate, a Kargo promotion, a bad
 * image aborted, and a lost notification turned into a stall alert and then recovered. Every line
 * it prints names the release it is about.
 */
import { ABORT_ACTION_ID, APPROVE_ACTION_ID, REFRESH_APPROVE_ACTION_ID } from '../../src/slack/buttons.js';
import type { SampleWorld } from '../kube/world.js';
import type { SlackStandIn } from '../slack/server.js';
import type { TranscriptMessage } from '../slack/transcript.js';
import type { Actor } from './actor.js';
import type { GlidepathView } from './glidepath-view.js';
import type { PrintedButton } from './printer.js';

export interface StoryDeps {
  world: SampleWorld;
  slack: SlackStandIn;
  glidepath: GlidepathView;
  actor: Actor;
  /** CI announcing a release (POST /v1/releases with the CI token). */
  announce: (releaseId: string, version: string) => Promise<void>;
  say: (line: string) => void;
  /** Waits this many story milliseconds (shortened by the speed). */
  sleep: (ms: number) => Promise<void>;
  /** How long the sandbox waits for you before it clicks a button itself (story ms). */
  waitForYouMs: number;
  channels: Record<'checkout' | 'checkoutAppSet' | 'checkoutKargo', string>;
}

const LABEL: Record<string, string> = { [APPROVE_ACTION_ID]: 'Approve', [ABORT_ACTION_ID]: 'Abort', [REFRESH_APPROVE_ACTION_ID]: 'Refresh and approve' };

export class Story {
  /** Approve buttons the story will click for you if you do not. */
  private readonly autoApprove = true;

  constructor(private readonly d: StoryDeps) {}

  /** Called by the printer loop with every button that appeared: Approve ones are clicked for you after a while. */
  onButtons(buttons: PrintedButton[]): void {
    for (const b of buttons) {
      if (b.actionId !== APPROVE_ACTION_ID || !this.autoApprove) continue;
      void this.approveLater(b).catch((err: unknown) => this.d.say(`  ${b.releaseId} · (could not click Approve: ${err instanceof Error ? err.message : String(err)})`));
    }
  }

  private async approveLater(b: PrintedButton): Promise<void> {
    this.d.say(`… ${b.releaseId} · ${b.pipeline} waits for approval: click Approve (the sandbox clicks it for you in ${Math.round(this.d.waitForYouMs / 1000)} story seconds)`);
    await this.d.sleep(this.d.waitForYouMs);
    const now = this.d.slack.transcript.find(b.channel, b.message.ts);
    const stillThere = now?.blocks.some((x) => (x as { type?: string }).type === 'actions' && JSON.stringify(x).includes(APPROVE_ACTION_ID));
    if (!now || !stillThere) return; // Someone clicked it (or it was replaced): nothing to do.
    this.d.say(`→ ${b.releaseId} · nobody clicked Approve yet: the sandbox clicks it for you`);
    await this.d.actor.click(b.releaseId, b.channel, now, { actionId: APPROVE_ACTION_ID, value: b.value, label: 'Approve' });
  }

  /** Polls until `check` holds (story time); says so and goes on when it does not within `withinMs`. */
  private async until(releaseId: string, what: string, check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
    const step = 500;
    for (let waited = 0; waited <= withinMs; waited += step) {
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
  for a person. Approve it (or the sandbox does, after a while).`);
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
    this.d.world.appSet.faults.staleCache = ['checkout-prod-us'];
    const answers = await this.d.actor.command(id, this.d.channels.checkoutAppSet, 'approve checkout-appset@prod-us');
    // Refused either way the gate sees it: children not fresh since the last transition, or a step judged on a stale cache.
    // The answer may come after the command returns (the machine is busy): wait for it in what Slack received.
    const refusal = (text: string) => /stale|not fresh/i.test(text);
    const refused =
      answers.some(refusal) ||
      (await this.until(id, 'the refusal', async () => this.d.slack.transcript.responses.some((r) => refusal(JSON.stringify(r.body))), 60_000));
    if (refused) say(`✓ ${id} · the freshness gate refused to approve on stale state`);
    this.d.world.appSet.faults.staleCache = false;
    const refresh = [...this.d.slack.transcript.responses].reverse().find((r) => JSON.stringify(r.body.blocks ?? []).includes(REFRESH_APPROVE_ACTION_ID));
    const value = refresh ? buttonValue(refresh.body.blocks as unknown[], REFRESH_APPROVE_ACTION_ID) : undefined;
    if (value) {
      say(`  ${id} · the controller's cache is fresh again; you press Refresh and approve`);
      const message: TranscriptMessage = { ts: '0.000000', channel: this.d.channels.checkoutAppSet, user: 'U0GLIDEPATH', text: String(refresh!.body.text ?? ''), blocks: refresh!.body.blocks as unknown[], at: Date.now(), edits: [], replies: [] };
      await this.d.actor.click(id, this.d.channels.checkoutAppSet, { ...message }, { actionId: REFRESH_APPROVE_ACTION_ID, value, label: LABEL[REFRESH_APPROVE_ACTION_ID]! });
    } else {
      await this.d.actor.command(id, this.d.channels.checkoutAppSet, 'approve checkout-appset@prod-us');
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
    await this.d.actor.command(id, this.d.channels.checkoutKargo, 'promote checkout-kargo@dev --freight brave-lynx');
    const channel = this.d.channels.checkoutKargo;
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
  CI announces ${id}, whose image does not exist. On dev its pods never start; the canary
  cannot make progress and Glidepath says so. You abort it.`);
    await this.d.announce(id, '1.30.0-does-not-exist');
    this.d.world.releaseCheckout('1.30.0-does-not-exist', id, { paths: ['checkout/dev'] });
    const stuck = await this.until(id, 'the bad canary reported', async () => {
      const r = await this.d.glidepath.release('checkout', id);
      return r?.stages.some((s) => s.status === 'Degraded') === true;
    }, 900_000);
    if (stuck) say(`✓ ${id} · dev is Degraded: the new pods never became ready`);
    await this.d.actor.command(id, this.d.channels.checkout, 'abort dev/shop/checkout-dev');
    await this.d.sleep(1_000);
    await this.d.actor.confirmAbort(id);
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
