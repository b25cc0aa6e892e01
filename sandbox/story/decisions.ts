/**
 * The story's decisions (a paused canary, the stale step, the bad image, the Abort dialog): at
 * the default pace the story holds at each until you act in the page or press Enter in the
 * terminal, and says so in both places. Only with --auto does the sandbox act for you, after a
 * while, as a Slack user of its own.
 */
import type { Person } from './people.js';

export interface Decision {
  releaseId: string;
  /** What waits, in words: "dev waits for approval". */
  what: string;
  /** What to do in the page: "click Approve in its thread in #checkout-releases". */
  inPage: string;
  /** What Enter does: "approve it from here". */
  byEnter: string;
  /** Whether it was decided, in the page or otherwise (the button is gone, the answer came). */
  decided: () => Promise<boolean> | boolean;
  /** Decides it: for you (you pressed Enter) or as the sandbox (--auto). */
  act: (by: Person) => Promise<void>;
}

export interface DecisionsDeps {
  /** --auto: the sandbox decides for you after `waitForYouMs`. */
  auto: boolean;
  waitForYouMs: number;
  /** Waits this many story milliseconds (shortened by the speed). */
  sleep: (ms: number) => Promise<void>;
  say: (line: string) => void;
  /** The page's line about what the story waits for (empty: nothing). */
  show: (lines: string[]) => void;
}

const POLL_MS = 500;

interface Pending {
  decision: Decision;
  entered: boolean;
}

export class Decisions {
  private readonly pending: Pending[] = [];

  constructor(private readonly d: DecisionsDeps) {}

  /** Whether the story waits for someone now (its own timeouts do not run meanwhile). */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** A line typed in the terminal (Enter): decides the oldest open decision, for you. */
  pressEnter(): void {
    const next = this.pending.find((p) => !p.entered);
    if (!next) {
      this.d.say(`  (nothing waits for you now: Enter acts when the story asks you for something)`);
      return;
    }
    next.entered = true;
  }

  /** Holds until the decision is made; returns who made it. */
  async wait(decision: Decision): Promise<'page' | Person> {
    const entry: Pending = { decision, entered: false };
    this.pending.push(entry);
    this.showPending();
    const { releaseId, what } = decision;
    const seconds = Math.round(this.d.waitForYouMs / 1000);
    this.d.say(
      this.d.auto
        ? `… ${releaseId} · ${what}: ${decision.inPage}, or press Enter here to ${decision.byEnter} (--auto: the sandbox does it for you in ${seconds} story seconds)`
        : `… ${releaseId} · ${what}: the story waits for you. ${capitalized(decision.inPage)} in the page, or press Enter here to ${decision.byEnter}`,
    );
    try {
      for (let waited = 0; ; waited += POLL_MS) {
        if (await Promise.resolve(decision.decided()).catch(() => false)) {
          this.d.say(`✓ ${releaseId} · ${what}: decided in the page; the story goes on`);
          return 'page';
        }
        const by: Person | undefined = entry.entered ? 'you' : this.d.auto && waited >= this.d.waitForYouMs ? 'sandbox' : undefined;
        if (by) {
          await decision.act(by);
          return by;
        }
        await this.d.sleep(POLL_MS);
      }
    } finally {
      this.pending.splice(this.pending.indexOf(entry), 1);
      this.showPending();
    }
  }

  private showPending(): void {
    const how = this.d.auto ? 'or the sandbox does it for you soon (--auto)' : 'or press Enter in the terminal';
    this.d.show(this.pending.map(({ decision: x }) => `${x.releaseId} · ${x.what}: ${x.inPage}, ${how}`));
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
