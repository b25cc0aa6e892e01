/**
 * The config re-read while Glidepath runs: on SIGHUP (src/main.ts) and when the file changes.
 * A mounted ConfigMap changes by a symlink swap (the kubelet writes a new `..<timestamp>` folder
 * and renames `..data` onto it; the file is a symlink through `..data`), which a watch of the file
 * itself never sees: the folder is watched, events are debounced, and the file's hash decides
 * whether anything changed. A slow re-read on a timer covers volumes that send no events.
 *
 * The new file is validated exactly as at start-up (parseConfigFile: the same errors by path),
 * then checked for fields that cannot change live (src/config/live-fields.ts); either refusal
 * keeps the running config, is logged with every problem and counted. Each replica watches its
 * own mount: the kubelet updates every pod's copy of the same ConfigMap, and a replica can only
 * run a file it has read and validated itself, so replicas converge on the file, and
 * glidepath_config_info{hash} shows any replica that has not (or refused it).
 */
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../config/errors.js';
import { parseConfigFile, type ConfigFile } from '../config/file.js';
import { restartNeeded } from '../config/live-fields.js';
import { readConfigSource } from '../config/source.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';

export interface ConfigReloadOptions {
  /** The config file (through its symlinks, as mounted). */
  path: string;
  /** The hash of the file start-up read. */
  hash: string;
  /** The variable that named the file, for an unreadable file's message (as at start-up). */
  variable?: string;
  /** The running config (what a new file is compared with). */
  running: () => ConfigFile;
  /** Makes the new config the running one. */
  apply(next: ConfigFile): Promise<void>;
  logger: Logger;
  metrics: Metrics;
  /** Watch the file's folder (default true); off, only SIGHUP reloads. */
  watch?: boolean;
  /** Quiet time after the last event before the file is read (default 1 s: a swap is several events). */
  debounceMs?: number;
  /** The re-read on a timer (default 60 s; 0: none). */
  pollMs?: number;
}

export type ReloadTrigger = 'SIGHUP' | 'file' | 'poll' | 'api';

export type ReloadResult =
  | { result: 'applied' | 'unchanged'; hash: string }
  | { result: 'refused'; hash?: string; problems: string[] };

export class ConfigReloader {
  private running: string;
  /** The last file refused: the timer does not refuse it again every minute (SIGHUP and events do). */
  private refused?: string;
  private watcher?: FSWatcher;
  private debounce?: NodeJS.Timeout;
  private poll?: NodeJS.Timeout;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ConfigReloadOptions) {
    this.running = o.hash;
    this.show();
  }

  /** The hash of the running config's file. */
  get hash(): string {
    return this.running;
  }

  start(): this {
    if (this.o.watch ?? true) {
      try {
        this.watcher = watch(dirname(this.o.path), { persistent: false }, () => this.schedule());
        this.watcher.on('error', (err) => this.o.logger.warn({ path: this.o.path, err: err.message }, 'the config folder can no longer be watched; SIGHUP still reloads'));
      } catch (err) {
        this.o.logger.warn({ path: this.o.path, err: (err as Error).message }, 'the config folder cannot be watched; SIGHUP still reloads');
      }
    }
    const pollMs = this.o.pollMs ?? 60_000;
    if (pollMs > 0) {
      this.poll = setInterval(() => void this.reload('poll'), pollMs);
      this.poll.unref();
    }
    return this;
  }

  stop(): Promise<unknown> {
    this.watcher?.close();
    clearTimeout(this.debounce);
    clearInterval(this.poll);
    return this.chain;
  }

  /** Reads the file again and applies it when it is new and valid; one at a time, in order. */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const next = this.chain.then(() => this.once(trigger));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private schedule(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reload('file'), this.o.debounceMs ?? 1_000);
    this.debounce.unref();
  }

  private async once(trigger: ReloadTrigger): Promise<ReloadResult> {
    const { logger, metrics, path } = this.o;
    let text: string;
    let hash: string;
    try {
      ({ text, hash } = readConfigSource(path, this.o.variable));
    } catch (err) {
      // A file gone for a moment (between a swap's renames) is read again at the next event or tick.
      if (trigger === 'poll') return { result: 'refused', problems: [(err as Error).message] };
      return this.refuse(trigger, undefined, err instanceof ConfigError ? err.problems : [(err as Error).message]);
    }
    if (hash === this.running || (trigger === 'poll' && hash === this.refused)) {
      if (trigger !== 'poll') metrics.configReloads.inc({ result: 'unchanged' });
      if (trigger !== 'poll') logger.debug({ trigger, hash }, 'config reload: the file is the running one');
      return { result: 'unchanged', hash };
    }
    let next: ConfigFile;
    try {
      next = parseConfigFile(text, path);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return this.refuse(trigger, hash, err.problems);
    }
    const restart = restartNeeded(this.o.running(), next);
    if (restart.length > 0) return this.refuse(trigger, hash, restart);
    try {
      await this.o.apply(next);
    } catch (err) {
      logger.error({ trigger, hash, err: (err as Error).message }, 'config reload failed while applying; the parts already applied stay');
      return this.refuse(trigger, hash, [`could not be applied: ${(err as Error).message}`]);
    }
    const previous = this.running;
    this.running = hash;
    this.refused = undefined;
    this.show();
    metrics.configReloads.inc({ result: 'applied' });
    logger.info({ trigger, hash, previous, pipelines: next.pipelines.map((p) => p.name), templates: next.pipelineTemplates.map((t) => t.name) }, 'config reloaded and applied');
    return { result: 'applied', hash };
  }

  private refuse(trigger: ReloadTrigger, hash: string | undefined, problems: string[]): ReloadResult {
    if (hash !== undefined) this.refused = hash;
    this.o.metrics.configReloads.inc({ result: 'refused' });
    this.o.logger.error({ trigger, path: this.o.path, hash, running: this.running, problems }, `config reload refused: the running config (${this.running}) stays. ${problems.join('; ')}`);
    return { result: 'refused', ...(hash !== undefined ? { hash } : {}), problems };
  }

  private show(): void {
    this.o.metrics.configInfo.reset();
    this.o.metrics.configInfo.set({ hash: this.running }, 1);
  }
}
