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
