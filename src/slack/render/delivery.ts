/**
 * Delivery figures in words (the App Home and /glidepath stats say the same): per window, the
 * releases started, completed, failed and aborted, the share that failed or were aborted, the
 * median lead time and time to recover; and a text chart per day (App Home shows no image that
 * Glidepath does not host, and a line of block characters is bounded and needs none).
 */
import type { DeliveryFigures } from '../../releases/store/delivery-figures.js';
import type { DeliveryWindows } from '../../releases/store/delivery-stats.js';

const BARS = ['▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** One character per value: `▁` for none, then up to `█` for the largest. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (v <= 0 || max === 0 ? '▁' : BARS[Math.min(BARS.length - 1, Math.ceil((v / max) * BARS.length) - 1)])).join('');
}

/** A duration for people: `45s`, `12m`, `3h 5m`, `2d 4h`. */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h}h` : `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d}d` : `${d}d ${h % 24}h`;
}

export function windowLine(f: DeliveryFigures): string {
  const c = f.counts;
  const parts = [`${c.started} started`, `${c.completed} completed`, `${c.failed} failed`, `${c.aborted} aborted`];
  if (c.superseded > 0) parts.push(`${c.superseded} superseded`);
  parts.push(f.failureShare !== undefined ? `${Math.round(f.failureShare * 100)}% failed or aborted (${c.troubled} of ${c.ended} ended)` : 'none ended');
  parts.push(`median lead time ${f.medianLeadMs !== undefined ? humanDuration(f.medianLeadMs) : '–'}`);
  parts.push(`median time to recover ${f.medianRecoveryMs !== undefined ? humanDuration(f.medianRecoveryMs) : '–'}`);
  return `*${f.days} days:* ${parts.join(' · ')}`;
}

export function chartLine(f: DeliveryFigures): string {
  const completed = sparkline(f.perDay.map((d) => d.counts.completed));
  const troubled = sparkline(f.perDay.map((d) => d.counts.failed + d.counts.aborted));
  return `\`${completed}\` completed per day · \`${troubled}\` failed or aborted per day (${f.days} days, oldest first)`;
}

/** The figures of one pipeline, a few lines of mrkdwn (no name in it: the caller heads it). */
export function deliveryText(w: DeliveryWindows): string {
  const m = w.month.counts;
  if (m.started + m.completed + m.failed + m.aborted + m.superseded === 0) return 'No release recorded in the last 30 days.';
  return [windowLine(w.week), windowLine(w.month), chartLine(w.month)].join('\n');
}
