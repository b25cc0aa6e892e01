/**
 * The sandbox page's App Home, without a browser: `npm run sandbox` runs as the README says (a
 * child process, nothing in between mocked), and the test is the page. Opening the Home tab
 * (POST /act/home) sends Glidepath a signed app_home_opened as Slack does; Glidepath publishes the
 * view (views.publish to the Slack stand-in), and the page pushes it to its open stream and serves
 * it in its state. Once the story's first releases ended (rel-1.28.0 settles checkout before
 * the first pause), the view has checkout's delivery figures. The browser drawing it is
 * browser-story.test.ts's.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Block, PageState } from '../../sandbox/web/client/page-state.js';
import { startSandboxProcess } from '../helpers/sandbox-process.js';
import { waitFor } from '../helpers/wait.js';

/** Long enough for a loaded two-core machine; only ends a hung wait, never asserts a duration. */
const WAIT = 120_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The home view's text as the page draws it: headers, sections and context elements, in order. */
function homeLines(home: Block | undefined): string[] {
  const blocks = Array.isArray(home?.blocks) ? (home.blocks as Block[]) : [];
  return blocks.flatMap((b) => {
    if (b.type === 'context' && Array.isArray(b.elements)) return (b.elements as Block[]).map((e) => String(e.text ?? ''));
    const text = (b.text as { text?: string } | undefined)?.text;
    return text ? [text] : [];
  });
}

/** The page's server-sent states, as the page's EventSource receives them. */
async function* states(url: string, signal: AbortSignal): AsyncGenerator<PageState> {
  const res = await fetch(`${url}events`, { signal });
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of res.body!) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = /^data: (.*)$/m.exec(event)?.[1];
      if (/^event: state$/m.test(event) && data) yield JSON.parse(data) as PageState;
    }
  }
}

describe("the sandbox page's App Home", () => {
  it('opening it sends app_home_opened signed to Glidepath; the view it publishes is pushed to the page, with checkout\'s delivery figures once releases ended', async () => {
    // Without --auto the story holds at the first pause: checkout's first release has ended by then.
    const { child, dir, output, exited } = startSandboxProcess(['--speed', '10'], 'gp-web-home-');
    dirs.push(dir);
    const stream = new AbortController();
    try {
      await waitFor(async () => /✓ rel-1\.28\.0 · Complete in checkout/.test(output()) && /… rel-1\.29\.0 · checkout: \S+ waits for approval/.test(output()), `checkout's first release ended, the story at its first pause\n${output()}`, WAIT);
      const page = /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output())![1]!;
      const before = (await (await fetch(`${page}state`)).json()) as PageState;
      // Nobody opened the tab yet: Glidepath published nothing.
      expect(before.home).toBeUndefined();

      const pushed = states(page, stream.signal);
      expect((await pushed.next()).value?.home).toBeUndefined();
      const opened = await fetch(`${page}act/home`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(opened.status, await opened.clone().text()).toBe(200);
      expect(await opened.json()).toEqual({ ok: true });
      // The page pushes the published view to its open stream (no reload).
      let home: Block | undefined;
      for await (const s of pushed) {
        if (s.home) {
          home = s.home;
          break;
        }
      }
      const lines = homeLines(home);
      const checkout = lines.findIndex((l) => /^\*checkout\* in <#C0SANDBOX1>$/.test(l));
      expect(checkout, lines.join('\n')).toBeGreaterThanOrEqual(0);
      // checkout's figures, under its heading (before the next pipeline's): rel-1.28.0 completed, rel-1.29.0 runs.
      const next = lines.findIndex((l, i) => i > checkout && /^\*\S+\* in <#/.test(l));
      const figures = lines.slice(checkout + 1, next).find((l) => l.startsWith('*7 days:*'))?.split('\n');
      expect(figures, lines.join('\n')).toHaveLength(3);
      // rel-1.28.0 may have been heard already healthy: its lead time is unknown, shown as – until one is measured.
      expect(figures![0]).toMatch(/^\*7 days:\* [2-9]\d* started · [1-9]\d* completed · 0 failed · 0 aborted · 0% failed or aborted \(0 of [1-9]\d* ended\) · median lead time (\d+[smh]|–)/);
      expect(figures![1]).toMatch(/^\*30 days:\* [2-9]\d* started · [1-9]\d* completed · /);
      expect(figures![2]).toMatch(/^`▁+[▂▃▄▅▆▇█]` completed per day · /);
      // The page serves the same view in its state.
      const after = (await (await fetch(`${page}state`)).json()) as PageState;
      expect(homeLines(after.home)).toEqual(lines);
    } finally {
      stream.abort();
      child.kill('SIGINT');
      await exited;
    }
  }, 180_000);
});
