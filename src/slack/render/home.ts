/** The App Home tab: active releases per pipeline, newest first, their stages at a glance; then its delivery figures. */
import type { PipelineConfig } from '../../config/file.js';
import { releaseDisplayName } from '../../releases/record/display-name.js';
import type { ReleaseRecord } from '../../releases/record/record.js';
import type { DeliveryWindows } from '../../releases/store/delivery-stats.js';
import { deliveryText } from './delivery.js';
import { HOME_BLOCK_LIMIT, MESSAGE_TEXT_BUDGET, type Block, type HomeView } from './blocks.js';
import { fitBlocks } from './fit.js';
import { code, slackDate, untrusted } from '../../text/mrkdwn.js';
import { STATUS_ICON } from './stage.js';

export interface HomePipeline {
  pipeline: PipelineConfig;
  /** Newest first (as ReleaseReader.list returns them). */
  releases: ReleaseRecord[];
  /** Its delivery figures over 7 and 30 days, when they were read. */
  delivery?: DeliveryWindows;
}

export function glance(record: ReleaseRecord): string {
  return record.stages.map((s) => `${STATUS_ICON[s.status]} ${untrusted(s.name, 63, { oneLine: true })}`).join('  →  ');
}

export interface HomeLayout {
  /** How many of the pipelines, from the first, are the person's own apps (listed under their own header). */
  own?: number;
  /** Pipelines not read for this view (a fleet): named as a count, with where to look. */
  notShown?: number;
  /** Pipelines shown (or not) without their delivery figures: named as a count, with where to look. */
  deliveryNotShown?: number;
}

export function renderHome(pipelines: readonly HomePipeline[], layout: HomeLayout = {}): HomeView {
  const own = Math.min(layout.own ?? 0, pipelines.length);
  const blocks: Block[] = [
    { type: 'header', text: { type: 'plain_text', text: own > 0 ? 'Your apps' : 'Active releases' } },
  ];
  if (pipelines.length === 0) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: 'No pipelines are configured.' } });
  }
  for (const [i, { pipeline, releases, delivery }] of pipelines.entries()) {
    if (own > 0 && i === own) blocks.push({ type: 'header', text: { type: 'plain_text', text: 'Other pipelines' } });
    blocks.push({ type: 'divider' });
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*${untrusted(pipeline.name, 63)}* in <#${pipeline.channel}>` },
    });
    if (releases.length === 0) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: 'No active release.' }] });
    const sorted = [...releases].sort((a, b) => b.createdAt - a.createdAt || a.releaseId.localeCompare(b.releaseId));
    for (const r of sorted) {
      blocks.push({
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `${code(releaseDisplayName(r), 120)} · ${r.status} · last fact ${slackDate(r.lastHeardAt)}\n${glance(r)}`,
        },
      });
    }
    if (delivery) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: deliveryText(delivery) }] });
  }
  if (layout.notShown) {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `${layout.notShown} more pipelines are not shown here: \`/glidepath status <pipeline>\` shows any of them.` }] });
  }
  if (layout.deliveryNotShown) {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `Delivery figures are shown for the first pipelines only; \`/glidepath stats <pipeline>\` gives them for any of the other ${layout.deliveryNotShown}.` }] });
  }
  return { type: 'home', blocks: fitBlocks(blocks, { maxBlocks: HOME_BLOCK_LIMIT, textBudget: MESSAGE_TEXT_BUDGET * 2 }) };
}
