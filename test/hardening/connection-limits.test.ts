/**
 * Issue 14, item 3: slow clients cannot hold the gateway's sockets (headers timeout, caps on
 * connections in all and per address), and a stalled non-streamed upstream answer ends at the
 * per-request deadline with 504 `upstream_timeout` instead of after the 120 s body timeout.
 * Attackers connect from other loopback addresses (127.0.0.2-5) so the real client (127.0.0.1) is
 * another address, as it would be in production.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { fileLimitWarning, openFilesLimit } from '../../core/connection-limits.ts';
import { sleep } from '../helpers/sim-http.ts';

interface SlowClient {
  socket: Socket;
  closed: boolean;
  received: string;
}

/** Opens a connection from `localAddress` that sends its request headers one byte every 100 ms, never finishing them. */
function slowClient(port: number, localAddress: string): SlowClient {
  const client: SlowClient = { socket: connect({ port, host: '127.0.0.1', localAddress }), closed: false, received: '' };
  const head = 'POST /api/v1/chat/completions HTTP/1.1\r\nHost: tollgate\r\nX-Slow: ';
  let sent = 0;
  const timer = setInterval(() => {
    if (!client.socket.writable) return;
    client.socket.write(sent < head.length ? head.charAt(sent) : 'a');
    sent++;
  }, 100);
  client.socket.on('data', (data) => (client.received += data.toString()));
  client.socket.on('error', () => {});
  client.socket.on('close', () => {
    client.closed = true;
    clearInterval(timer);
  });
  return client;
}

/** Polls `condition` until true or `timeoutMs` passed (a liveness bound: generous, for a busy machine). */
async function until(condition: () => boolean, timeoutMs = 60_000): Promise<boolean> {
  const started = Date.now();
  while (!condition() && Date.now() - started < timeoutMs) await sleep(25);
  return condition();
}

let sim: OpenAISimulator;
before(async () => {
  sim = await startOpenAISimulator();
});
after(async () => {
  await sim?.close();
});

describe('slow clients', () => {
  let tg: TestGateway;
  const clients: SlowClient[] = [];
  before(async () => {
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
      server: { headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, maxConnectionsPerAddress: 40, maxConnections: 150 },
    });
  });
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await tg?.close();
  });

  test('300 slow-header connections from one address: the cap closes the extra ones, a real request is served, the rest time out', async () => {
    const port = tg.gateway.address.port;
    const attack = Array.from({ length: 300 }, () => slowClient(port, '127.0.0.2'));
    clients.push(...attack);
    // Over the per-address cap, connections are closed as soon as they are accepted.
    assert.ok(await until(() => attack.filter((c) => c.closed).length >= 260), `${attack.filter((c) => c.closed).length} closed`);

    const completion = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.object, 'chat.completion');

    // Those that never finish their headers are answered 408 and closed after headersTimeoutMs. Told
    // apart by what they got, not by when they closed (which a busy machine moves): the cap closes a
    // connection before a byte is read or written.
    assert.ok(await until(() => attack.every((c) => c.closed)), `${attack.filter((c) => !c.closed).length} still open`);
    assert.equal(attack.filter((c) => c.received === '').length, 260, 'closed by the cap at once');
    const timedOut = attack.filter((c) => c.received !== '');
    assert.equal(timedOut.length, 40, 'held up to the cap');
    for (const c of timedOut) assert.match(c.received, /^HTTP\/1\.1 408/);
  });

  test('connections beyond maxConnections are closed, whatever their address', async () => {
    const port = tg.gateway.address.port;
    const idle: SlowClient[] = [];
    for (const address of ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']) {
      for (let i = 0; i < 40; i++) idle.push(slowClient(port, address));
    }
    clients.push(...idle);
    // 160 under a cap of 150: at least 10 are closed at once, before a byte (the SDK's keep-alive
    // connection of the previous test may be in the count); the others time out with a 408.
    assert.ok(await until(() => idle.every((c) => c.closed)), `${idle.filter((c) => !c.closed).length} still open`);
    const refused = idle.filter((c) => c.received === '');
    assert.ok(refused.length >= 10, `${refused.length} closed by the cap`);
    for (const c of idle.filter((c) => c.received !== '')) assert.match(c.received, /^HTTP\/1\.1 408/);
  });
});

describe('the per-request deadline of a non-streamed upstream call', () => {
  let stalling: Server;
  let tg: TestGateway;
  before(async () => {
    // Sends its status, headers and a part of the body, then nothing (a stalled upstream).
    stalling = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"chatcmpl-stall","object":"chat.completion",');
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const { port } = stalling.address() as AddressInfo;
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-test' } },
      upstream: { requestDeadlineMs: 500, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000 },
    });
  });
  after(async () => {
    await tg?.close();
    stalling.closeAllConnections();
    await new Promise((resolve) => stalling.close(resolve));
  });

  test('answers 504 upstream_timeout when the upstream stalls past upstream.requestDeadlineMs', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      signal: AbortSignal.timeout(60_000), // a liveness bound
    });
    assert.equal(res.status, 504);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'upstream_timeout');
    assert.match(body.error.message, /requestDeadlineMs/);
  });
});

describe('the open-file limit', () => {
  test('reads the soft and hard limits from /proc/self/limits', () => {
    const text = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n';
    assert.deepEqual(openFilesLimit(text), { soft: 1024, hard: 524288 });
    assert.equal(openFilesLimit('Max open files  unlimited  unlimited  files\n'), null);
  });

  test('warns when the connection cap does not fit under the soft limit', () => {
    assert.match(fileLimitWarning(4096, { soft: 1024, hard: 524288 }) ?? '', /server\.maxConnections is 4096, but the open-file limit is 1024/);
    assert.equal(fileLimitWarning(256, { soft: 65536, hard: 65536 }), null);
    assert.equal(fileLimitWarning(4096, null), null);
  });
});

describe('the manifest', () => {
  test('refuses a requestTimeoutMs below headersTimeoutMs, and fills the defaults', async () => {
    const { validateManifest, ManifestError } = await import('../../core/manifest.ts');
    const { pluginRegistry } = await import('../../plugins/index.ts');
    const plugins = [{ name: 'provider-router', config: { providers: {} } }];
    assert.throws(
      () => validateManifest({ server: { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 }, plugins }, pluginRegistry, { env: {} }),
      (err: unknown) => err instanceof ManifestError && err.issues.some((i) => i.pointer === '/server/requestTimeoutMs' && /must be >= headersTimeoutMs/.test(i.message)),
    );
    const manifest = validateManifest({ plugins }, pluginRegistry, { env: {} });
    assert.deepEqual(
      [manifest.server.headersTimeoutMs, manifest.server.requestTimeoutMs, manifest.server.keepAliveTimeoutMs, manifest.server.maxConnections, manifest.server.maxConnectionsPerAddress, manifest.upstream.requestDeadlineMs],
      [20_000, 300_000, 65_000, 4096, 256, 300_000],
    );
  });
});
