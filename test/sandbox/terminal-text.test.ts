/** The sandbox's terminal shows Slack text as a person reads it: no entities, no link syntax. */
import { describe, expect, it } from 'vitest';
import { terminalText } from '../../sandbox/story/terminal-text.js';

describe('terminalText', () => {
  it('shows escaped usage as typed, links as label and address, mentions by name', () => {
    expect(terminalText('*Usage:* `/glidepath approve &lt;pipeline@stage | cluster/namespace/rollout&gt;`', false)).toBe('Usage: `/glidepath approve <pipeline@stage | cluster/namespace/rollout>`');
    expect(terminalText('see <https://git.example.com/pull/1|PR #1> by <@U0SANDBOX>', false)).toBe('see PR #1 (https://git.example.com/pull/1) by @you');
    expect(terminalText('a &amp;lt; b', false)).toBe('a &lt; b');
  });
});
