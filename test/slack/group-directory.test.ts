import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { createSlackClient } from '../../src/slack/client.js';
import { SlackGroupDirectory } from '../../src/slack/group-directory.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

describe('SlackGroupDirectory', () => {
  it('answers membership from usergroups.users.list, cached for a while', async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-g', usergroups: { S0SRE: ['U0ALICE', 'U0BOB'] } });
    const clock = { t: 0 };
    const groups = new SlackGroupDirectory(createSlackClient('xoxb-g', slack.apiUrl), { ttlMs: 60_000, now: () => clock.t });
    expect(await groups.isMember('S0SRE', 'U0ALICE')).toBe(true);
    expect(await groups.isMember('S0SRE', 'U0MALLORY')).toBe(false);
    expect(slack.calls.get('usergroups.users.list')).toBe(1);
    clock.t += 60_000;
    expect(await groups.isMember('S0SRE', 'U0BOB')).toBe(true);
    expect(slack.calls.get('usergroups.users.list')).toBe(2);
  });

  it('does not cache a failed lookup', async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-g', usergroups: {} });
    const groups = new SlackGroupDirectory(createSlackClient('xoxb-g', slack.apiUrl));
    await expect(groups.isMember('S0GONE', 'U1')).rejects.toThrow(/no_such_subteam/);
    await expect(groups.isMember('S0GONE', 'U1')).rejects.toThrow(/no_such_subteam/);
    expect(slack.calls.get('usergroups.users.list')).toBe(2);
  });
});
