import { afterEach, describe, expect, it } from 'vitest';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { createSlackClient } from '../../src/slack/client.js';
import { SlackProfileDirectory } from '../../src/slack/profile-directory.js';
import { IdentityMap } from '../../src/policy/identity.js';
import { SlackGroupDirectory } from '../../src/slack/group-directory.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

const users = { U0ALICE: { name: 'alice', email: 'Alice@Example.com' }, U0EVE: { name: 'eve', email: '<!channel>@example.com' }, U0NOMAIL: { name: 'nomail' } };

describe('SlackProfileDirectory', () => {
  it("reads the profile's email with users.info, lower-cased, cached for its time; a malformed or missing email is none", async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-p', users });
    const clock = { t: 0 };
    const profiles = new SlackProfileDirectory(createSlackClient('xoxb-p', slack.apiUrl), 60_000, () => clock.t);
    expect(await profiles.email('U0ALICE')).toBe('alice@example.com');
    expect(await profiles.email('U0ALICE')).toBe('alice@example.com');
    expect(slack.calls.get('users.info')).toBe(1);
    clock.t += 60_000;
    expect(await profiles.email('U0ALICE')).toBe('alice@example.com');
    expect(slack.calls.get('users.info')).toBe(2);
    expect(await profiles.email('U0EVE')).toBeUndefined();
    expect(await profiles.email('U0NOMAIL')).toBeUndefined();
  });

  it('a failed lookup is not cached, and the identity map says what it could not read (the scope to grant)', async () => {
    slack = await startSlackStandIn({ botToken: 'xoxb-p', users });
    const client = createSlackClient('xoxb-p', slack.apiUrl);
    const map = new IdentityMap({ users: {}, byEmail: { cacheSeconds: 60, groups: ['everyone'] }, slackGroups: {} }, new SlackGroupDirectory(client), new SlackProfileDirectory(client, 60_000));
    slack.injectFaults('users.info', 1, { kind: 'error', error: 'missing_scope' });
    const noScope = await map.resolve('U0ALICE');
    expect(noScope.kind === 'unmapped' && noScope.reason).toContain("could not read your Slack profile's email (An API error occurred: missing_scope; its Slack app needs the users:read.email scope)");
    const unknown = await map.resolve('U0GONE');
    expect(unknown.kind === 'unmapped' && unknown.reason).toContain('user_not_found');
    expect(unknown.kind === 'unmapped' && unknown.reason).not.toContain('scope');
    expect(slack.calls.get('users.info')).toBe(2);
    expect(await map.resolve('U0ALICE')).toEqual({ kind: 'mapped', identity: { user: 'alice@example.com', groups: ['everyone'] }, via: 'email' });
  });
});
