/**
 * Who acts in the sandbox's Slack: you (the page, or Enter in the terminal) and the sandbox
 * itself (`--auto`), a Slack user of its own, so a click the story made never reads "by @you".
 */
export const YOU = 'U0SANDBOX';
/** The story acting for you with --auto: in the SRE group like you, so its clicks act. */
export const THE_SANDBOX = 'U0STORY';

export type Person = 'you' | 'sandbox';

export const PEOPLE: Record<Person, { id: string; name: string; realName: string }> = {
  you: { id: YOU, name: 'you', realName: 'You (sandbox)' },
  sandbox: { id: THE_SANDBOX, name: 'sandbox', realName: 'The sandbox (acting for you with --auto)' },
};

/** Mention names by Slack user id, for the terminal and the page. */
export const MENTION_NAMES: Record<string, string> = { [YOU]: 'you', [THE_SANDBOX]: 'sandbox' };

/**
 * Who you and the sandbox are in Kubernetes (the config's identity map): on the clusters that send
 * writes as the person (the sandbox's dev), your approve reaches the API server as you@example.com.
 */
export const KUBERNETES_PEOPLE: Record<string, { user: string; groups: string[] }> = {
  [YOU]: { user: 'you@example.com', groups: ['sre'] },
  [THE_SANDBOX]: { user: 'sandbox@example.com', groups: ['sre'] },
};
/** The clusters whose writes are sent as the person (`authorization: both`); prod's stay Glidepath's own. */
export const ACT_AS_PEOPLE_ON: ('dev' | 'prod')[] = ['dev'];
