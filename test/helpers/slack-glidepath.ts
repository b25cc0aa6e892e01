/** A real Glidepath with Slack in HTTP mode on its own port (one process, one Redis prefix), against the Slack stand-in. */
import type { Glidepath } from '../../src/glidepath.js';
import { startSlackStandIn, type SlackStandIn } from '../../sandbox/slack/server.js';
import { dropPrefix, startTestGlidepath, testEnv } from './glidepath.js';
import { testConfig } from './pipeline.js';

export const SLACK_TEST_SECRET = 'bounds-test-signing-secret-0123';

export interface SlackGlidepath {
  glidepath: Glidepath;
  slack: SlackStandIn;
  eventsUrl: string;
  close(): Promise<void>;
}

/** Several Glidepaths can share one prefix (replicas) by passing the same `prefix`. */
export async function startSlackGlidepath(overrides: Record<string, string> = {}, shared?: { slack: SlackStandIn; prefix: string }): Promise<SlackGlidepath> {
  const slack = shared?.slack ?? (await startSlackStandIn({ botToken: 'xoxb-bounds' }));
  const env = testEnv({
    SLACK_BOT_TOKEN: 'xoxb-bounds',
    SLACK_SIGNING_SECRET: SLACK_TEST_SECRET,
    SLACK_API_URL: slack.apiUrl,
    ...(shared ? { REDIS_PREFIX: shared.prefix } : {}),
    ...overrides,
  });
  const config = testConfig();
  const glidepath = await startTestGlidepath(config, env);
  return {
    glidepath,
    slack,
    eventsUrl: `${glidepath.url}/slack/events`,
    async close() {
      await glidepath.close();
      if (!shared) {
        await slack.close();
        await dropPrefix(env.REDIS_PREFIX);
      }
    },
  };
}
