/**
 * An OTLP/HTTP traces sink for the benchmark's tracing variant (`BENCH_TRACING=1`): accepts
 * `POST /v1/traces`, reads the body, answers `200 {}`, and keeps only counts (exports, bytes), which
 * it prints on SIGTERM. It runs beside the load generator, not on the gateway's CPU: the gateway pays
 * for making, batching and sending its spans, not for a collector.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let exports = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (part: Buffer) => (bytes += part.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') exports += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`otlp sink on http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces\n`);
});
process.on('SIGTERM', () => {
  process.stderr.write(`otlp sink: ${exports} exports, ${(bytes / 1_048_576).toFixed(1)} MiB of spans\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
