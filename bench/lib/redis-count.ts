/**
 * Counts what this process sends to Redis, per tag: every command ioredis writes (pipelined and
 * MULTI ones each count, as INFO commandstats counts them), round trips (a pipeline or MULTI is
 * one), and the bytes of the arguments. Commands are tagged by the async context they are sent
 * from (`run(tag, fn)`), so a benchmark can say which work sent them; the rest are `untagged`.
 * Installed by wrapping ioredis' `Redis.prototype.sendCommand` in the benchmark process (the
 * product's code is not touched); BullMQ's connections are ioredis connections too.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Redis } from 'ioredis';

export interface Tally {
  commands: number;
  roundTrips: number;
  bytes: number;
  byCommand: Map<string, number>;
  /** Bytes of the arguments, by command. */
  bytesByCommand: Map<string, number>;
}

const empty = (): Tally => ({ commands: 0, roundTrips: 0, bytes: 0, byCommand: new Map(), bytesByCommand: new Map() });

function argBytes(args: unknown[]): number {
  let n = 0;
  for (const a of args) n += typeof a === 'string' ? Buffer.byteLength(a) : Buffer.isBuffer(a) ? a.length : String(a).length;
  return n;
}

export class RedisCounter {
  private readonly context = new AsyncLocalStorage<string>();
  private readonly tallies = new Map<string, Tally>();
  private readonly pipelines = new WeakSet<object>();

  install(): this {
    const proto = Redis.prototype as unknown as { sendCommand(command: { name: string; args: unknown[] }, stream?: { isPipeline?: boolean }): unknown };
    const send = proto.sendCommand;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const counter = this;
    proto.sendCommand = function (this: unknown, command, stream) {
      counter.note(command, stream);
      return send.call(this, command, stream);
    };
    return this;
  }

  run<T>(tag: string, fn: () => T): T {
    return this.context.run(tag, fn);
  }

  /** The tag of the async context this is called from. */
  tag(): string | undefined {
    return this.context.getStore();
  }

  /** The tallies so far, by tag; `reset` starts them again. */
  take(reset = true): Map<string, Tally> {
    const out = new Map(this.tallies);
    if (reset) this.tallies.clear();
    return out;
  }

  private note(command: { name: string; args: unknown[] }, stream: { isPipeline?: boolean } | undefined): void {
    const tag = this.context.getStore() ?? 'untagged';
    let t = this.tallies.get(tag);
    if (!t) this.tallies.set(tag, (t = empty()));
    t.commands++;
    if (!stream?.isPipeline) t.roundTrips++;
    else if (!this.pipelines.has(stream)) {
      this.pipelines.add(stream);
      t.roundTrips++;
    }
    const bytes = argBytes(command.args);
    t.bytes += bytes;
    const name = command.name.toLowerCase();
    t.byCommand.set(name, (t.byCommand.get(name) ?? 0) + 1);
    t.bytesByCommand.set(name, (t.bytesByCommand.get(name) ?? 0) + bytes);
  }
}
