import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { authorize, type GroupDirectory } from '../../src/policy/permissions.js';

const config = parseConfigFile(`
clusters: [{ name: prod, inCluster: true }]
pipelines:
  - name: checkout
    channel: C0123
    stages:
      - { name: staging, cluster: prod, rollouts: { namespace: shop, selector: "env=staging" } }
      - name: prod
        cluster: prod
        rollouts: { namespace: shop, selector: "env=prod" }
        permissions: { approve: [S0SRE, U0ALICE], abort: [S0SRE], requireTwoApprovers: true }
      - name: canary
        cluster: prod
        rollouts: { namespace: shop, selector: "env=canary" }
        permissions: { approve: [U0ALICE], refresh: [U0CAROL] }
`);

/** The directory as Slack would answer it: group S0SRE has Bob. */
const groups: GroupDirectory = { isMember: async (g, u) => g === 'S0SRE' && u === 'U0BOB' };

describe('permissions', () => {
  it('allows a listed user and a member of a listed group, and says prod needs two approvers', async () => {
    expect(await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'approve', 'U0ALICE', groups)).toEqual({ allowed: true, via: 'U0ALICE' });
    expect(await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'abort', 'U0BOB', groups)).toEqual({ allowed: true, via: 'S0SRE' });
  });

  it('denies others and names the setting and who may', async () => {
    const d = await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'abort', 'U0ALICE', groups);
    expect(d).toEqual({ allowed: false, reason: 'you may not abort in checkout@prod: pipelines[0].stages[1].permissions.abort allows S0SRE; ask one of them, or an admin to add you' });
  });

  it('denies by default when nothing is configured, saying which setting to add', async () => {
    const d = await authorize(config, { pipeline: 'checkout', stage: 'staging' }, 'approve', 'U0ALICE', groups);
    expect(d).toEqual({ allowed: false, reason: 'nobody may approve in checkout@staging yet: add Slack user or group ids to pipelines[0].stages[0].permissions.approve in the Glidepath config' });
    const promote = await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'promote', 'U0ALICE', groups);
    expect(promote.allowed).toBe(false);
  });

  it('a refresh is granted to whoever may approve unless the stage lists its own, and the refusal says which', async () => {
    expect(await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'refresh', 'U0BOB', groups)).toEqual({ allowed: true, via: 'S0SRE' });
    expect(await authorize(config, { pipeline: 'checkout', stage: 'prod' }, 'refresh', 'U0DAVE', groups)).toEqual({
      allowed: false,
      reason: 'you may not refresh in checkout@prod: pipelines[0].stages[1].permissions.approve allows S0SRE, U0ALICE (pipelines[0].stages[1].permissions.refresh is not set, so whoever may approve may refresh); ask one of them, or an admin to add you',
    });
    expect(await authorize(config, { pipeline: 'checkout', stage: 'canary' }, 'refresh', 'U0CAROL', groups)).toMatchObject({ allowed: true, via: 'U0CAROL' });
    expect(await authorize(config, { pipeline: 'checkout', stage: 'canary' }, 'refresh', 'U0ALICE', groups)).toEqual({
      allowed: false,
      reason: 'you may not refresh in checkout@canary: pipelines[0].stages[2].permissions.refresh allows U0CAROL; ask one of them, or an admin to add you',
    });
    expect(await authorize(config, { pipeline: 'checkout', stage: 'staging' }, 'refresh', 'U0ALICE', groups)).toEqual({
      allowed: false,
      reason: 'nobody may refresh in checkout@staging yet: add Slack user or group ids to pipelines[0].stages[0].permissions.refresh or pipelines[0].stages[0].permissions.approve in the Glidepath config',
    });
  });
});
