/**
 * What the sandbox started, stopped in reverse order, on Ctrl-C, at SANDBOX_SECONDS, and after a
 * failed start alike: a failed start leaves no server, no child process and no Redis key behind.
 */
export class Teardown {
  private readonly steps: { what: string; run: () => Promise<void> | void }[] = [];

  add(what: string, run: () => Promise<void> | void): void {
    this.steps.push({ what, run });
  }

  /** Runs every step once, newest first; a failing step is reported and the rest still run. */
  async run(report: (line: string) => void): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.run();
      } catch (err) {
        report(`sandbox: could not stop ${step.what}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
