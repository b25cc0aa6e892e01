/**
 * The config file's text and its hash, read the one way start-up and a reload both read it: a
 * file that cannot be read is one line naming where its path came from.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

const UNREADABLE: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied (this process may not read it)',
  EISDIR: 'is a directory, not a file',
};

export interface ConfigSource {
  text: string;
  /** sha256 of the file's bytes, first 16 hex digits: which file a replica runs (glidepath_config_info, /readyz). */
  hash: string;
}

export function configHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/** `variable`: the environment variable that named the file, so a missing file says where the path came from. */
export function readConfigSource(path: string, variable?: string): ConfigSource {
  const source = variable ? `${variable}=${path}` : path;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = (code && UNREADABLE[code]) ?? `cannot read the file: ${code ?? String(err)}`;
    // One line, naming the variable and the path: "GLIDEPATH_CONFIG=/etc/glidepath.yaml: no such file".
    throw new ConfigError(source, [why], `${source}: ${why}`);
  }
  return { text, hash: configHash(text) };
}
