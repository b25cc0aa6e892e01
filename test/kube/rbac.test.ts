import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { KubeApi } from '../../src/kube/api.js';
import { ROLLOUTS } from '../../src/kube/resources.js';
import { declaredTriples, VERBS } from '../../src/kube/verbs.js';
import { KubeConfig } from '@kubernetes/client-node';
import { shippedClusterRoleRules } from './support.js';

const read = (file: string) => parse(readFileSync(new URL(`../../deploy/rbac/${file}`, import.meta.url), 'utf8'));

describe('deploy/rbac', () => {
  it('grants exactly the verbs declared in src/kube/verbs.ts: no more, no less', () => {
    const granted = shippedClusterRoleRules()
      .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g} ${res} ${v}`))))
      .sort();
    expect(granted.some((t) => t.includes('*'))).toBe(false);
    expect(new Set(granted).size).toBe(granted.length);
    expect(granted).toEqual(declaredTriples());
  });

  it('binds the ClusterRole to the ServiceAccount Glidepath runs as', () => {
    const role = read('glidepath-clusterrole.yaml');
    const binding = read('glidepath-clusterrolebinding.yaml');
    const account = read('glidepath-serviceaccount.yaml');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace }]);
  });

  it('every declaration says why it is needed', () => {
    for (const v of VERBS) expect(v.why.length).toBeGreaterThan(10);
  });

  it('a call that is not declared never reaches the cluster', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' });
    const api = new KubeApi('prod', kc, 1000);
    await expect(api.create(ROLLOUTS, 'shop', {})).rejects.toThrow('Glidepath tried to create rollouts (argoproj.io) without declaring it in src/kube/verbs.ts');
  });
});
