/**
 * A webhook receiver on 127.0.0.1 for alert tests: records every POST (headers and the raw body,
 * exactly as received) and answers with the statuses it is told to, in order, then 200.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './sim-http.ts';

export interface ReceivedHook {
  headers: Record<string, string | string[] | undefined>;
  /** The raw body, as the signature covers it. */
  raw: string;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedHook[];
  /** Resolves once `count` hooks arrived in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedHook[]>;
  close(): Promise<void>;
}

/** Starts a receiver on `port` (0 = any free one); the first answers are `statuses`, the rest 200. */
export async function startWebhookReceiver(options: { port?: number; statuses?: number[] } = {}): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const statuses = [...(options.statuses ?? [])];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver failed on purpose');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/budget`,
    port,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} hooks, expected ${count}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return received;
    },
    close: () => closeServer(server),
  };
}
