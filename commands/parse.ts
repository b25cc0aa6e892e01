/**
 * Parsing of `/glidepath <subcommand> …`: words, `--flags`, and the target forms people type.
 * Every mistake becomes a UsageError whose message says what was wrong and how to do it right.
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The subcommand whose usage to show (undefined: the general help). */
    readonly subcommand?: string,
  ) {
    super(message);
  }
}

export type Target =
  | { kind: 'stage'; pipeline: string; stage: string }
  | { kind: 'object'; cluster: string; namespace: string; name: string };

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function parseTarget(text: string, subcommand: string): Target {
  const at = /^([^@/\s]+)@([^@/\s]+)$/.exec(text);
  if (at) {
    const [pipeline, stage] = [at[1]!, at[2]!];
    if (!NAME.test(pipeline) || !NAME.test(stage)) throw new UsageError(`"${text}" is not a pipeline@stage name`, subcommand);
    return { kind: 'stage', pipeline, stage };
  }
  const parts = text.split('/');
  if (parts.length === 3 && parts.every((p) => NAME.test(p))) {
    const [cluster, namespace, name] = parts as [string, string, string];
    return { kind: 'object', cluster, namespace, name };
  }
  throw new UsageError(`"${text}" is not a target: write pipeline@stage (checkout@prod) or cluster/namespace/name (prod/shop/checkout)`, subcommand);
}

export interface Words {
  positional: string[];
  flags: Map<string, string | true>;
}

/** Splits on spaces, keeps "quoted strings" together, and reads --flag / --flag value / --flag=value. */
export function splitWords(text: string, subcommand: string, valueFlags: readonly string[], boolFlags: readonly string[]): Words {
  const tokens = [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (!token.startsWith('--')) {
      positional.push(token);
      continue;
    }
    const [name, inline] = token.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (boolFlags.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`, subcommand);
      flags.set(name, true);
    } else if (valueFlags.includes(name)) {
      const value = inline ?? tokens[++i];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`, subcommand);
      flags.set(name, value);
    } else {
      const known = [...valueFlags, ...boolFlags].map((f) => `--${f}`).join(', ');
      throw new UsageError(`unknown option --${name}${known ? ` (options: ${known})` : ''}`, subcommand);
    }
  }
  return { positional, flags };
}

/** `90s`, `5m`, `1h` → milliseconds. */
export function parseDuration(text: string, subcommand: string, max = 60 * 60_000): number {
  const m = /^(\d+)(s|m|h)$/.exec(text);
  if (!m) throw new UsageError(`"${text}" is not a duration: write 90s, 5m or 1h`, subcommand);
  const ms = Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'];
  if (ms <= 0 || ms > max) throw new UsageError(`the timeout must be between 1s and ${max / 60_000}m`, subcommand);
  return ms;
}
