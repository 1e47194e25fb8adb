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
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { SILENT_GRACE_MS, fileLimitWarning, openFilesLimit } from '../../core/http/connection-limits.ts';
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

/** Opens a connection from `localAddress` that sends nothing. */
function silentClient(port: number, localAddress: string): SlowClient {
  const client: SlowClient = { socket: connect({ port, host: '127.0.0.1', localAddress }), closed: false, received: '' };
  client.socket.on('error', () => {});
  client.socket.on('close', () => (client.closed = true));
  return client;
}

/**
 * Opens a connection from `localAddress` that sends part of a request head, then one more byte every
 * 100 ms (never finishing it), never reads what it is sent and never closes its side: only the server
 * can close it. Its writes after the server has closed are what surface that close here.
 */
function stubbornClient(port: number, localAddress: string): SlowClient {
  const client: SlowClient = { socket: connect({ port, host: '127.0.0.1', localAddress, allowHalfOpen: true }), closed: false, received: '' };
  client.socket.pause();
  client.socket.write('POST /api/v1/chat/completions HTTP/1.1\r\nHost: tollgate\r\nX-Slow: ');
  const timer = setInterval(() => {
    if (client.socket.writable) client.socket.write('a');
  }, 100);
  client.socket.on('error', () => {});
  client.socket.on('close', () => {
    client.closed = true;
    clearInterval(timer);
  });
  return client;
}

/** The gateway's open client connections, as node:http counts them. */
function openConnections(tg: TestGateway): Promise<number> {
  return new Promise((resolve, reject) => tg.gateway.server.server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
}

/** `GET path` (with `headers`) from `localAddress` on a connection of its own; the status, or the error's code. */
function getFrom(tg: TestGateway, localAddress: string, path: string, headers: Record<string, string> = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(`${tg.gateway.origin}${path}`, { localAddress, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

/** A chat completion with `key` from `localAddress` on a connection of its own; the status, or the error's code. */
function chatFrom(tg: TestGateway, localAddress: string, key: string): Promise<number | string> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const req = request(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST', localAddress, agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(body);
  });
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
    // Over the per-address cap (all of them idle), each new connection closes the oldest at once.
    assert.ok(await until(() => attack.filter((c) => c.closed).length >= 260), `${attack.filter((c) => c.closed).length} closed`);
    const held = attack.filter((c) => !c.closed);
    assert.equal(held.length, 40);

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

describe('connections that never close (issue 39, item 4)', () => {
  let tg: TestGateway;
  const clients: SlowClient[] = [];
  before(async () => {
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
      server: { headersTimeoutMs: 300, requestTimeoutMs: 300 },
    });
  });
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await tg?.close();
  });

  test('a client that sends part of its headers, then never reads nor closes, has its socket closed by the server after the 408', async () => {
    const port = tg.gateway.address.port;
    const stubborn = Array.from({ length: 5 }, () => stubbornClient(port, '127.0.0.7'));
    clients.push(...stubborn);
    assert.ok(await until(() => stubborn.every((c) => c.closed)), `${stubborn.filter((c) => !c.closed).length} of 5 still open`);
    assert.equal(await openConnections(tg), 0);
  });

  test('a body that stops coming on /api/v1/messages is answered 408 in Anthropic\'s shape, and the socket closed', async () => {
    const socket = connect(tg.gateway.address.port, '127.0.0.1');
    clients.push({ socket, received: '', closed: false });
    let received = '';
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1'); });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`POST /api/v1/messages HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tg.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"model":`);
    await closed;
    assert.match(received, /^HTTP\/1\.1 408/);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { type?: string; error?: { type?: string } };
    assert.equal(body.type, 'error', received);
    assert.equal(typeof body.error?.type, 'string');
  });
});

describe('a stranger\'s sign-in whose body never comes (issue 39, item 4)', () => {
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
      server: { headersTimeoutMs: 300, requestTimeoutMs: 300_000 },
    });
  });
  after(async () => {
    await tg?.close();
  });

  test('is answered 408 after headersTimeoutMs and its connection closed, not held for requestTimeoutMs', async () => {
    const socket = connect(tg.gateway.address.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1'); });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('POST /admin/api/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
    await closed;
    assert.match(received, /^HTTP\/1\.1 408/, received.slice(0, 200));
    assert.match(received, /"code":"request_timeout"/);
    assert.equal(await openConnections(tg), 0);
  });
});

describe('idle connections at the caps (issue 39, item 4)', () => {
  let tg: TestGateway;
  /** The server's side of each connection it accepted (before any cap closes it), in order. */
  const accepted: Socket[] = [];
  const clients: SlowClient[] = [];
  before(async () => {
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
      // Timeouts far beyond the test: only the caps close a socket here.
      server: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, maxConnections: 10, maxConnectionsPerAddress: 6, maxIdleConnectionsPerAddress: 4 },
    });
    tg.gateway.server.server.on('connection', (socket: Socket) => accepted.push(socket));
  });
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await tg?.close();
  });

  /**
   * Opens `count` slow-header connections from `address`, one after another, each accepted and its
   * first bytes read by the server before the next (a connection that sent nothing yet is spared).
   */
  async function openSlow(address: string, count: number): Promise<SlowClient[]> {
    const opened: SlowClient[] = [];
    for (let i = 0; i < count; i++) {
      const seen = accepted.length;
      const client = slowClient(tg.gateway.address.port, address);
      opened.push(client);
      clients.push(client);
      assert.ok(await until(() => accepted.length > seen && (accepted[seen]!.bytesRead > 0 || accepted[seen]!.destroyed)), 'the server reads the connection');
    }
    return opened;
  }

  /** Closes `list` from the client side and waits until the server has no connection left. */
  async function closeAll(list: SlowClient[]): Promise<void> {
    for (const client of list) client.socket.destroy();
    for (let tries = 0; tries < 80 && (await openConnections(tg)) > 0; tries++) await sleep(25);
    assert.equal(await openConnections(tg), 0);
  }

  test('an address keeps at most maxIdleConnectionsPerAddress connections that serve no request: a new one closes the oldest', async () => {
    const idle = await openSlow('127.0.0.8', 6);
    assert.ok(await until(() => idle[0]!.closed && idle[1]!.closed), 'the two oldest are closed by the server');
    await sleep(100);
    assert.deepEqual(idle.map((c) => c.closed), [true, true, false, false, false, false]);
    assert.equal(await openConnections(tg), 4);
    await closeAll(idle);
  });

  test('an address at its cap of idle connections still gets /healthz and a request with a known key served; each closes its oldest idle connection', async () => {
    const idle = await openSlow('127.0.0.9', 4);
    assert.equal(await getFrom(tg, '127.0.0.9', '/healthz'), 200);
    assert.ok(await until(() => idle[0]!.closed), 'the oldest idle connection made room');
    for (let tries = 0; tries < 80 && (await openConnections(tg)) > 3; tries++) await sleep(25);
    idle.push(...(await openSlow('127.0.0.9', 1)));
    assert.equal(await openConnections(tg), 4, 'at the cap again');
    assert.equal(await chatFrom(tg, '127.0.0.9', tg.apiKey), 200);
    assert.ok(await until(() => idle[1]!.closed), 'the next oldest made room');
    await sleep(100);
    assert.deepEqual(idle.map((c) => c.closed), [true, true, false, false, false]);
    await closeAll(idle);
  });

  test('a burst of connections that sent nothing yet is not cut by the idle cap; after SILENT_GRACE_MS the oldest of them makes room', async () => {
    const seen = accepted.length;
    const silent = Array.from({ length: 5 }, () => silentClient(tg.gateway.address.port, '127.0.0.13'));
    clients.push(...silent);
    assert.ok(await until(() => accepted.length >= seen + 5));
    await sleep(50);
    assert.equal(await openConnections(tg), 5, 'over the idle cap of 4: none of them is closed');
    assert.ok(silent.every((c) => !c.closed));
    await sleep(SILENT_GRACE_MS + 50);
    const late = await openSlow('127.0.0.13', 1);
    assert.ok(await until(() => silent.some((c) => c.closed)), 'one of the silent connections made room');
    assert.equal(await openConnections(tg), 5);
    await closeAll([...silent, ...late]);
  });

  test('with all maxConnections idle, a client from another address gets /healthz and a request with a known key served; each closes the oldest idle connection', async () => {
    const idle = [...(await openSlow('127.0.0.10', 4)), ...(await openSlow('127.0.0.11', 4)), ...(await openSlow('127.0.0.12', 2))];
    assert.equal(await openConnections(tg), 10);
    assert.equal(await getFrom(tg, '127.0.0.1', '/healthz'), 200);
    assert.ok(await until(() => idle[0]!.closed), 'the oldest idle connection made room');
    for (let tries = 0; tries < 80 && (await openConnections(tg)) > 9; tries++) await sleep(25);
    idle.push(...(await openSlow('127.0.0.12', 1)));
    assert.equal(await openConnections(tg), 10, 'at the cap again');
    assert.equal(await chatFrom(tg, '127.0.0.1', tg.apiKey), 200);
    assert.ok(await until(() => idle[1]!.closed), 'the next oldest made room');
    await sleep(100);
    assert.equal(idle.filter((c) => c.closed).length, 2);
    await closeAll(idle);
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
      [manifest.server.headersTimeoutMs, manifest.server.requestTimeoutMs, manifest.server.keepAliveTimeoutMs, manifest.server.maxConnections, manifest.server.maxConnectionsPerAddress, manifest.server.maxIdleConnectionsPerAddress, manifest.upstream.requestDeadlineMs],
      [20_000, 300_000, 65_000, 4096, 256, 64, 300_000],
    );
  });
});
