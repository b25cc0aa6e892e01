/**
 * Commands a process sends to Redis in one turn of the event loop leave in one system call.
 *
 * ioredis writes each command to its socket as it is sent, and on loopback a socket write is
 * where the kernel does the whole delivery: in bench:ingest the workers' socket writes were 15% of
 * their CPU (writeUtf8String and writeBuffer, 6 Dec 2026), for commands sent side by side (a batch's
 * reads under one Promise.all, the jobs and lanes a reply wakes together). Corking the socket at the
 * first write of a turn and uncorking it on the next tick sends them together, as Node's docs advise
 * for writable.cork(): the order of commands (which is how ioredis matches replies) is unchanged and
 * nothing waits longer than the turn that sent it.
 *
 * Not ioredis' enableAutoPipelining: that goes through a Pipeline object per turn and per command,
 * and BullMQ's own commands share these connections (its users reported jobs "not in the active
 * list" with it). This changes how bytes leave, not what is sent.
 */
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

const coalesced = new WeakSet<Socket>();

const uncork = (socket: Socket): void => socket.uncork();

function coalesce(socket: Socket): void {
  if (coalesced.has(socket)) return;
  coalesced.add(socket);
  const write = socket.write;
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>): boolean {
    if (this.writableCorked === 0) {
      this.cork();
      process.nextTick(uncork, this);
    }
    return (write as (...a: Parameters<Socket['write']>) => boolean).apply(this, args);
  } as Socket['write'];
}

/** Coalesces the writes of `redis`'s socket, and of the socket of every reconnection. A standalone or sentinel client; a Cluster keeps its own. */
export function coalesceWrites(redis: Redis): Redis {
  const onConnect = () => {
    const stream = (redis as unknown as { stream?: unknown }).stream;
    if (stream && typeof (stream as Socket).cork === 'function') coalesce(stream as Socket);
  };
  redis.on('connect', onConnect);
  return redis;
}
