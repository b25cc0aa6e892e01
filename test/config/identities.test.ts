/** The config of acting as the person: `authorization` per cluster and the `identities` map, checked at load. */
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/file.js';
import { ConfigError } from '../../src/config/errors.js';

const CONFIG = `
clusters:
  - name: prod
    authorization: kubernetes
  - name: staging
identities:
  users:
    U0ALICE: { user: alice@example.com, groups: [shop-deployers] }
  byEmail: { cacheSeconds: 300, groups: [slack-users] }
  slackGroups:
    S0OPS: [platform-ops]
`;

function problems(text: string): string[] {
  try {
    parseConfigFile(text, 'glidepath.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected the config to be refused');
}

describe('authorization and identities in the config', () => {
  it('reads the switch per cluster (config when unset) and the map', () => {
    const config = parseConfigFile(CONFIG);
    expect(config.clusters.map((c) => [c.name, c.authorization])).toEqual([['prod', 'kubernetes'], ['staging', 'config']]);
    expect(config.identities).toEqual({
      users: { U0ALICE: { user: 'alice@example.com', groups: ['shop-deployers'] } },
      byEmail: { cacheSeconds: 300, groups: ['slack-users'] },
      slackGroups: { S0OPS: ['platform-ops'] },
    });
    expect(parseConfigFile('clusters: [{ name: prod }]').identities).toEqual({ users: {}, slackGroups: {} });
  });

  it('refuses, by path, what could not be sent or shown safely: a system: identity, Slack control characters, a bad Slack id, an unknown switch', () => {
    const found = problems(`
clusters:
  - { name: prod, authorization: rbac }
identities:
  users:
    alice: { user: alice@example.com }
    U0BOB: { user: "system:admin" }
    U0EVE: { user: "<!channel>", groups: ["a&b"] }
`);
    expect(found.join('\n')).toMatch(/clusters\[0\]\.authorization/);
    expect(found.join('\n')).toMatch(/identities\.users.*must be a Slack user id/);
    expect(found.join('\n')).toContain('may not be a system: identity');
    expect(found.filter((p) => p.includes('may not contain <, > or &'))).toHaveLength(2);
  });
});
