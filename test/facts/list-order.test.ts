/**
 * What lists first in a cluster (src/facts/watch/list-order.ts): the Applications of a namespace
 * wait for its ApplicationSets' list to be queued, never for ever: a leader whose list keeps
 * failing holds them a bounded time, and none once that time has passed.
 */
import { describe, expect, it } from 'vitest';
import { APPLICATION_SETS, APPLICATIONS, ROLLOUTS } from '../../src/kube/resources.js';
import { ListOrder, listRole } from '../../src/facts/watch/list-order.js';

describe('the list order of a cluster', () => {
  it('ApplicationSets lead, the Applications of their namespace follow, others are free', () => {
    const scopes = [
      { resource: APPLICATION_SETS, namespace: 'argocd', fieldSelector: 'metadata.name=checkout' },
      { resource: APPLICATIONS, namespace: 'argocd', ownedBy: ['checkout'] },
      { resource: APPLICATIONS, namespace: 'argocd', labelSelector: 'glidepath=true' },
      { resource: APPLICATIONS, namespace: 'other', labelSelector: 'glidepath=true' },
      { resource: ROLLOUTS, namespace: 'shop' },
    ];
    expect(scopes.map((s) => listRole(s, scopes))).toEqual([{ leader: 'argocd|metadata.name=checkout' }, 'follower', 'follower', undefined, undefined]);
  });

  it('a follower lists once the leader is queued', async () => {
    const order = new ListOrder(60_000);
    order.listDue('a');
    const events: string[] = [];
    const follower = order.ready().then(() => events.push('follower lists'));
    await Promise.resolve();
    events.push('leader queued');
    order.listQueued('a');
    await follower;
    expect(events).toEqual(['leader queued', 'follower lists']);
    // Nothing due: at once.
    await order.ready();
  });

  it('a leader whose list keeps failing holds its followers a bounded time, then none', async () => {
    const order = new ListOrder(20);
    order.listDue('a');
    // It holds at first (a follower does not list at once)…
    let listed = false;
    const held = order.ready().then(() => (listed = true));
    await Promise.resolve();
    expect(listed).toBe(false);
    // …and lets go when the bound has passed, though the leader never queued.
    await held;
    // Its list is still due (a retry): later followers do not wait for it again, but do for another leader.
    order.listDue('a');
    await order.ready();
    order.listDue('b');
    const events: string[] = [];
    const follower = order.ready().then(() => events.push('follower lists'));
    await Promise.resolve();
    events.push('b queued');
    order.listQueued('b');
    await follower;
    expect(events).toEqual(['b queued', 'follower lists']);
  });

  it('stopping releases the followers waiting', async () => {
    const order = new ListOrder(60_000);
    order.listDue('a');
    const follower = order.ready();
    order.close();
    await follower;
  });
});
