/**
 * Impersonation and SubjectAccessReview between the product's client (KubeApi.as, reviewAccess)
 * and the stand-in API server, which serves them as a real one does: the caller needs
 * `impersonate` on each user and group, then RBAC is the impersonated identity's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rolloutManifest } from '../../sandbox/kube/builders.js';
import { ROLLOUTS } from '../../src/kube/resources.js';
import { ClusterClients } from '../../src/kube/clusters.js';
import { accessNeeds, describeMissing, missingAccess } from '../../src/kube/access-check.js';
import { configFileSchema } from '../../src/config/file.js';
import { failure, GLIDEPATH_RULES, startKubeWorld, type KubeWorld } from './support.js';

let world: KubeWorld;
const PATCH_SHOP = { verbs: ['patch', 'get'], apiGroups: ['argoproj.io'], resources: ['rollouts'], namespaces: ['shop'] };

beforeEach(async () => {
  world = await startKubeWorld();
  world.store.create(world.store.registry.byKind('Rollout', 'argoproj.io'), 'shop', rolloutManifest({ namespace: 'shop', name: 'checkout', image: 'registry.example.com/shop/checkout:1.0.0' }));
  world.server.authorizer.grant('Group', 'team, with a comma', [PATCH_SHOP]);
});
afterEach(async () => {
  await world.close();
});

const api = () => world.clusters.api('prod');

/** A client as a user with the shipped rules except those `drop` matches, on its own cluster name. */
async function asUserWithout(name: string, drop: (rule: (typeof GLIDEPATH_RULES)[number]) => boolean, run: (clients: ClusterClients) => Promise<void>): Promise<void> {
  world.server.authorizer.addUser({ name, token: `${name}-token`, rules: GLIDEPATH_RULES.filter((r) => !drop(r)) });
  world.server.writeKubeconfig(world.kubeconfigPath, 'prod', 'glidepath');
  const clusters = new ClusterClients([{ name, kubeconfigPath: world.kubeconfigPath, kubeconfigContext: `${name}@prod` }]);
  try {
    await run(clusters);
  } finally {
    await clusters.close();
  }
}
const patchAnnotation = (value: string) => ({ metadata: { annotations: { 'example.com/note': value } } });

describe('writes sent as a person', () => {
  it('arrive as the user and every group, each group its own header line (a comma inside a group name stays one group); reads stay Glidepath’s', async () => {
    const alice = api().as({ user: 'alice@example.com', groups: ['team, with a comma', 'second'] });
    await alice.patch(ROLLOUTS, 'shop', 'checkout', patchAnnotation('by alice'));
    await alice.get(ROLLOUTS, 'shop', 'checkout');
    const served = world.server.writes.filter((w) => w.name === 'checkout');
    expect(served.map((w) => w.subject)).toEqual([{ user: 'alice@example.com', groups: ['team, with a comma', 'second'], impersonatedBy: 'glidepath' }]);
    expect(world.store.get(world.store.registry.byKind('Rollout', 'argoproj.io'), 'shop', 'checkout').metadata.annotations?.['example.com/note']).toBe('by alice');
    // The view's identity is its own: the cluster's API itself still writes as Glidepath.
    await api().patch(ROLLOUTS, 'shop', 'checkout', patchAnnotation('by glidepath'));
    expect(world.server.writes.at(-1)!.subject).toEqual({ user: 'glidepath', groups: [] });
  });

  it('a person whose RBAC lacks the verb is refused by the cluster as themselves, and the message names them, not the service account', async () => {
    const bob = api().as({ user: 'bob@example.com', groups: [] });
    const err = await failure(bob.patch(ROLLOUTS, 'shop', 'checkout', patchAnnotation('by bob')));
    expect(err.kind).toBe('forbidden');
    expect(err.message).toContain('bob@example.com may not patch rollouts in prod/shop');
    expect(err.message).toContain('User "bob@example.com" cannot patch resource "rollouts"');
    expect(world.server.writes).toEqual([]);
  });

  it('a caller without `impersonate` is refused (403) before RBAC is asked for the person', async () => {
    await asUserWithout('no-impersonate', (r) => r.verbs.includes('impersonate'), async (clusters) => {
      const err = await failure(clusters.api('no-impersonate').as({ user: 'alice@example.com', groups: ['team, with a comma'] }).patch(ROLLOUTS, 'shop', 'checkout', patchAnnotation('x')));
      expect(err.kind).toBe('forbidden');
      expect(err.message).toContain('User "no-impersonate" cannot impersonate resource "users"');
      expect(world.server.writes).toEqual([]);
    });
  });
});

describe('SubjectAccessReview', () => {
  it('answers for the user and groups it names, not for the caller', async () => {
    const access = { verb: 'patch', group: 'argoproj.io', resource: 'rollouts', namespace: 'shop', name: 'checkout' };
    expect((await api().reviewAccess({ user: 'alice@example.com', groups: ['team, with a comma'] }, access)).allowed).toBe(true);
    expect((await api().reviewAccess({ user: 'alice@example.com', groups: [] }, access)).allowed).toBe(false);
    expect((await api().reviewAccess({ user: 'alice@example.com', groups: ['team, with a comma'] }, { ...access, namespace: 'pay' })).allowed).toBe(false);
    // Glidepath itself may patch rollouts everywhere (deploy/rbac): the review is not about it.
    expect((await api().reviewAccess({ user: 'glidepath-lookalike', groups: [] }, access)).allowed).toBe(false);
  });

  it('is refused to a caller that may not create subjectaccessreviews', async () => {
    await asUserWithout('no-review', (r) => r.resources.includes('subjectaccessreviews'), async (clusters) => {
      const err = await failure(clusters.api('no-review').reviewAccess({ user: 'alice@example.com', groups: [] }, { verb: 'get', group: 'argoproj.io', resource: 'rollouts', namespace: 'shop' }));
      expect(err.kind).toBe('forbidden');
      expect(err.message).toContain('subjectaccessreviews');
    });
  });
});

describe('glidepath check on a cluster that acts as the person', () => {
  const config = (authorization: 'config' | 'kubernetes') =>
    configFileSchema.parse({
      clusters: [{ name: 'prod', authorization }],
      pipelines: [{ name: 'checkout', channel: 'C0CHECKOUT', stages: [{ name: 'prod', cluster: 'prod', rollouts: { namespace: 'shop', selector: 'app=checkout' } }] }],
    });

  it('asks for impersonate and access reviews at the cluster scope only where authorization is not config, and names them when missing', async () => {
    const personal = (c: ReturnType<typeof config>) => accessNeeds(c, 'prod').filter((n) => n.verb.actingAsThePerson);
    expect(personal(config('config'))).toEqual([]);
    expect(personal(config('kubernetes')).map((n) => [n.verb.resource, n.verb.verb, n.namespace])).toEqual([
      ['users', 'impersonate', undefined],
      ['groups', 'impersonate', undefined],
      ['subjectaccessreviews', 'create', undefined],
    ]);
    expect((await missingAccess(api(), accessNeeds(config('kubernetes'), 'prod'))).missing).toEqual([]);
    await asUserWithout('no-impersonate', (r) => r.verbs.includes('impersonate'), async (clusters) => {
      const report = await missingAccess(clusters.api('no-impersonate'), accessNeeds(config('kubernetes'), 'prod'));
      expect(describeMissing(report.missing)).toEqual(['impersonate users (core) in the cluster scope', 'impersonate groups (core) in the cluster scope']);
    });
  });
});
