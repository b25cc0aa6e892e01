/** A webhook receiver over real HTTP that records what the notifications engine sends. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  authorization?: string;
  contentType?: string;
  body: { event: string; sentAt: number; rollout?: any; application?: any };
}

export class Receiver {
  readonly received: Received[] = [];
  /** Status to answer with (e.g. 500 to exercise retries). */
  status = 200;
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({
          authorization: req.headers.authorization,
          contentType: req.headers['content-type'],
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'],
        });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/facts/rollouts`;
  }

  events(): string[] {
    return this.received.map((r) => r.body.event);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
