/**
 * The Node ceiling for `npm run bench`: the least a Node proxy can do, an undici pass-through with a
 * keep-alive pool and no checks, parsing, accounting or logging. Whatever Tollgate spends above it is
 * the price of its plugins. Prints `ceiling listening on http://…` when ready.
 *
 * Env: CEILING_UPSTREAM (the simulator's origin + `/v1`), CEILING_API_KEY (sent upstream).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = new URL(process.env.CEILING_UPSTREAM!);
const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
const authorization = `Bearer ${process.env.CEILING_API_KEY ?? ''}`;
const upstreamPath = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    pool.request({
      method: 'POST',
      path: upstreamPath,
      headers: { 'content-type': 'application/json', authorization },
      body: Buffer.concat(chunks),
    }).then(({ statusCode, headers, body }) => {
      res.writeHead(statusCode, { 'content-type': String(headers['content-type'] ?? 'application/json') });
      body.pipe(res);
    }, () => {
      res.writeHead(502).end();
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`ceiling listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
