import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../helpers/pipeline.js';
import { tempDir } from '../helpers/temp-dir.js';
import { parseEnv } from '../../src/config/env.js';
import { parseConfigFile } from '../../src/config/file.js';
import { watchBoundsBytes } from '../../src/config/durations.js';

const bad = `
clusters:
  - name: prod
    kubeconfigContext: prod
pipelines:
  - name: checkout
    channel: C0123CHECKOUT
    stages:
      - name: staging
        cluster: prod
        rollouts: { namespace: shop, selector: "app=checkout" }
  - name: payments
    channel: "#payments"
    stages:
      - name: prod
        cluster: prdo
        rollouts: { namespace: shop, selector: "app==" }
        permissions: { approve: [alice] }
      - name: prod
        cluster: prod
`;

const problems = (text: string): string[] => configProblems(() => parseConfigFile(text));

describe('config file', () => {
  it('lists every problem by its path', () => {
    const p = problems(bad);
    expect(p).toEqual(
      expect.arrayContaining([
        'pipelines[1].channel: must be a Slack channel id such as C0123ABCD (not a #name)',
        'pipelines[1].stages[0].rollouts.selector: invalid label selector "app==": "app==" needs a value; to select on the label\'s presence write just "app"',
        'pipelines[1].stages[0].permissions.approve[0]: must be a Slack user id (U…/W…) or user group id (S…)',
        'pipelines[1].stages[1]: a stage selects its targets with exactly one of rollouts, applications, applicationSet or kargo (found none)',
      ]),
    );
    expect(p.length).toBeGreaterThanOrEqual(4);
  });

  it('checks references between sections too, in the same run', () => {
    const p = problems(`
clusters: [{ name: prod, inCluster: true }]
pipelines:
  - name: checkout
    channel: C1
    stages:
      - { name: prod, cluster: prdo, rollouts: { namespace: shop, selector: "app=x" } }
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=x" } }
`);
    expect(p).toEqual([
      'pipelines[0].channel: must be a Slack channel id such as C0123ABCD (not a #name)',
      'pipelines[0].stages[0].cluster: unknown cluster "prdo" (clusters: prod)',
      'pipelines[0].stages[1].name: duplicate stage "prod"',
    ]);
    const q = problems(`
clusters: [{ name: prod, inCluster: true }]
pipelines:
  - name: checkout
    channel: C0123
    stages:
      - { name: prod, cluster: prdo, rollouts: { namespace: shop, selector: "app=x" } }
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=x" } }
`);
    expect(q).toEqual(['pipelines[0].stages[0].cluster: unknown cluster "prdo" (clusters: prod)', 'pipelines[0].stages[1].name: duplicate stage "prod"']);
  });

  it('refuses a bad approvals block by its path (and one beside requireTwoApprovers), and fills its defaults', () => {
    const stage = (approvals: string, permissions = '') => `
clusters: [{ name: prod, inCluster: true }]
pipelines:
  - name: checkout
    channel: C0123
    stages:
      - { name: prod, cluster: prod, rollouts: { namespace: shop, selector: "app=x" }, approvals: ${approvals}${permissions} }
`;
    expect(problems(stage('{ required: 0, from: [alice], distinct: false, quorum: 2 }'))).toEqual([
      'pipelines[0].stages[0].approvals.required: Too small: expected number to be >=1',
      'pipelines[0].stages[0].approvals.from[0]: must be a Slack user id (U…/W…) or user group id (S…)',
      'pipelines[0].stages[0].approvals.distinct: the same person never counts twice: distinct may only be true (or left out)',
      'pipelines[0].stages[0].approvals: Unrecognized key: "quorum"',
    ]);
    expect(problems(stage('{ from: [] }'))).toEqual([
      'pipelines[0].stages[0].approvals.required: Invalid input: expected number, received undefined',
      'pipelines[0].stages[0].approvals.from: list at least one Slack user or group id, or leave from out (whoever may approve counts)',
    ]);
    expect(problems(stage('{ required: 3 }', ', permissions: { approve: [U0ALICE], requireTwoApprovers: true }'))).toEqual([
      'pipelines[0].stages[0].approvals: set approvals.required or permissions.requireTwoApprovers, not both (requireTwoApprovers: true is approvals: { required: 2 })',
    ]);
    const cfg = parseConfigFile(stage('{ required: 2, from: [S0SRE, U0ALICE] }'));
    expect(cfg.pipelines[0]!.stages[0]!.approvals).toEqual({ required: 2, from: ['S0SRE', 'U0ALICE'], distinct: true, excludeAuthor: true });
  });

  it('reports YAML syntax errors without a stack trace', () => {
    expect(problems('clusters: [\n  - name: prod')[0]).toMatch(/^YAML: /);
  });

  it('fills defaults', () => {
    const cfg = parseConfigFile('clusters: [{ name: prod, inCluster: true }]');
    expect(cfg.settings).toMatchObject({ stallAfterMinutes: 20, unhealthyGraceMinutes: 2, hookPinnedAfterMinutes: 10, watchMaxLineMiB: 16, watchMaxStreamMiB: 512 });
    expect(cfg.clusters[0]!.argocdNamespaces).toEqual(['argocd']);
  });

  it('gives the watch bounds in bytes and refuses a line cap of nothing', () => {
    const cfg = parseConfigFile('settings: { watchMaxLineMiB: 2, watchMaxStreamMiB: 64 }\nclusters: [{ name: prod, inCluster: true }]');
    expect(watchBoundsBytes(cfg)).toEqual({ maxLineBytes: 2 * 1024 * 1024, maxStreamBytes: 64 * 1024 * 1024 });
    expect(problems('settings: { watchMaxLineMiB: 0 }\nclusters: [{ name: prod, inCluster: true }]')[0]).toMatch(/^settings\.watchMaxLineMiB: /);
  });
});

describe('environment', () => {
  it('maps ingest tokens to clusters and refuses short ones', () => {
    const env = parseEnv({ INGEST_TOKENS: 'prod=aaaaaaaaaaaaaaaaaaaa, dev=bbbbbbbbbbbbbbbbbbbb' });
    expect([...env.INGEST_TOKENS.entries()]).toEqual([
      ['aaaaaaaaaaaaaaaaaaaa', 'prod'],
      ['bbbbbbbbbbbbbbbbbbbb', 'dev'],
    ]);
    expect(() => parseEnv({ INGEST_TOKENS: 'prod=short' })).toThrow(/INGEST_TOKENS: the token for cluster "prod" is shorter than 16 characters/);
    expect(() => parseEnv({ PORT: 'eighty' })).toThrow(/PORT: /);
  });
});

describe('start-up with a bad config', () => {
  it('exits 1 and prints every problem, not a stack trace', async () => {
    const dir = tempDir('gp-config-');
    const file = join(dir, 'config.yaml');
    writeFileSync(file, bad);
    const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
    const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', main], { env: { ...process.env, GLIDEPATH_CONFIG: file } }).catch((e) => e);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('pipelines[1].stages[0].rollouts.selector: invalid label selector "app=="');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
