/**
 * What a saved batch tells the delivery roll-up: effects (`delivery.note`) for a release opened and
 * for a status reached, derived from the status before the batch and the record after it. Pure;
 * they go out with the record's outbox, so a worker killed after the save still counts them (the
 * roll-up counts each release and event once: delivery-stats.ts).
 */
import type { DeliveryEvent, DeliveryNote, ReleaseRecord, ReleaseStatus } from '../record/record.js';

const EVENT_OF: Partial<Record<ReleaseStatus, DeliveryEvent>> = {
  Complete: 'completed',
  Failed: 'failed',
  Aborted: 'aborted',
  Superseded: 'superseded',
};

/** When the last stage became healthy (the release completed), or when the record last changed. */
function healthyAt(record: ReleaseRecord): number {
  const times = record.stages.map((s) => s.healthyAt).filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.max(...times) : (record.finishedAt ?? record.updatedAt);
}

export function deliveryNotes(before: ReleaseStatus | undefined, record: ReleaseRecord, isNew: boolean): DeliveryNote[] {
  const notes: DeliveryNote[] = [];
  if (isNew) notes.push({ id: 'delivery:started', type: 'delivery.note', event: 'started', at: record.createdAt });
  const event = EVENT_OF[record.status];
  if (event && record.status !== before) {
    if (event === 'completed') {
      const at = healthyAt(record);
      // Healthy when first heard (its first facts already said so): how long it took is unknown, not 0 s.
      notes.push({ id: `delivery:${event}`, type: 'delivery.note', event, at, ...(at > record.createdAt ? { leadMs: at - record.createdAt } : {}) });
    } else {
      notes.push({ id: `delivery:${event}`, type: 'delivery.note', event, at: record.updatedAt });
    }
  }
  return notes;
}
