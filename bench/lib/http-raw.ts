/**
 * A minimal HTTP/1.1 keep-alive client on raw sockets, for load generation only: one request in
 * flight per connection, a fixed request shape (POST with a JSON body and a Bearer token), and
 * answers read by their status line, Content-Length and Retry-After. It exists because the load
 * generator shares the machine's two cores with what it measures: node:http's client costs
 * ~55-70 µs of CPU per request here, this one a fraction of it, and what it saves goes to the
 * processes under test (the bare BullMQ baseline has no HTTP client to pay for).
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Seconds, from Retry-After (ingest sends it with a 503 only). */
  retryAfter?: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export class RawConnection {
  private readonly socket: Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { resolve(a: RawAnswer): void; reject(err: Error): void } | undefined;
  /** False once the socket closed or the server asked to close it: the pool drops it. */
  open = true;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => this.fail(new Error('connection closed with a request in flight')));
    socket.on('error', (err) => this.fail(err));
  }

  static open(host: string, port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends one request (its head already written out) and resolves with the answer. */
  send(head: string, body: Buffer): Promise<RawAnswer> {
    if (this.waiting) throw new Error('one request at a time per connection');
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.cork();
      this.socket.write(head);
      this.socket.write(body);
      this.socket.uncork();
    });
  }

  close(): void {
    this.open = false;
    this.socket.destroy();
  }

  private fail(err: Error): void {
    this.open = false;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(err);
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const end = this.buffered.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buffered.toString('latin1', 0, end);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    const total = end + HEADER_END.length + length;
    if (this.buffered.length < total) return;
    this.buffered = this.buffered.subarray(total);
    const status = Number(head.slice(9, 12));
    const retryAfter = Number(/\r\nretry-after:\s*(\d+)/i.exec(head)?.[1]);
    if (/\r\nconnection:\s*close/i.test(head)) this.close();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ status, ...(retryAfter > 0 ? { retryAfter } : {}) });
  }
}

/**
 * Connections to one server, reused most recently freed first, opened when none is free, up to
 * `maxConnections`; past that a request waits for one to come free, as node:http's Agent queues
 * past maxSockets (a stall must not open more sockets than the server accepts).
 */
export class RawPool {
  private readonly free: RawConnection[] = [];
  private readonly all = new Set<RawConnection>();
  private readonly waiting: (() => void)[] = [];
  private opening = 0;
  private readonly headStart: string;

  constructor(
    private readonly url: URL,
    token: string,
    private readonly maxConnections = 256,
  ) {
    if (!url.port) throw new Error(`the load generator needs a URL with a port, not ${url.href}`);
    this.headStart = `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: `;
  }

  /**
   * Sent again once, on whichever connection comes next, if the one it went out on closed first
   * (the server closes idle ones after its keep-alive timeout): a fact sent again is harmless,
   * it has the same identity.
   */
  async post(body: Buffer): Promise<RawAnswer> {
    try {
      return await this.postOnce(body);
    } catch {
      return this.postOnce(body);
    }
  }

  private async postOnce(body: Buffer): Promise<RawAnswer> {
    const connection = await this.take();
    try {
      return await connection.send(`${this.headStart}${body.length}\r\n\r\n`, body);
    } finally {
      this.give(connection);
    }
  }

  private async take(): Promise<RawConnection> {
    for (;;) {
      let connection: RawConnection | undefined;
      while ((connection = this.free.pop()) && !connection.open) this.all.delete(connection);
      if (connection) return connection;
      if (this.all.size + this.opening < this.maxConnections) {
        this.opening++;
        try {
          connection = await RawConnection.open(this.url.hostname, Number(this.url.port));
        } finally {
          this.opening--;
        }
        this.all.add(connection);
        return connection;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private give(connection: RawConnection): void {
    if (connection.open) this.free.push(connection);
    else this.all.delete(connection);
    this.waiting.shift()?.();
  }

  close(): void {
    for (const c of this.all) c.close();
    this.all.clear();
    this.free.length = 0;
  }
}
