import type { z } from 'zod';

/** Formats a zod path as `pipelines[1].stages[0].rollouts.selector`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
}

/**
 * Why start-up cannot go on, said so a person can fix it: the message is the whole story, so
 * `main` prints it alone (no stack). Each part of start-up has its own kind below.
 */
export class StartupError extends Error {}

/** A configuration problem found at start-up; the message lists every error by path. */
export class ConfigError extends StartupError {
  override readonly name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problems: string[],
    /** The whole message, when "… is not valid" and a list would not read true (a file that cannot be read). */
    message?: string,
  ) {
    super(message ?? `${source} is not valid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}
