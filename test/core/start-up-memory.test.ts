/**
 * The one memory-reducing GC after start-up (`core/start-up-memory.ts`): cancelled by a request,
 * run once when the server stays quiet, and it shrinks a grown young generation back. Each test file
 * runs in its own process, so the once-per-process state starts fresh here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { getHeapSpaceStatistics } from 'node:v8';
import type { AddressInfo } from 'node:net';
import { releaseStartUpMemory, releaseStartUpMemoryWhenIdle } from '../../core/start-up-memory.ts';
import { closeServer, sleep } from '../helpers/sim-http.ts';

const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

async function listening(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

// On Node 20 nothing is scheduled at all (see the module), so this one holds trivially there.
test('a request within the quiet time cancels it', async () => {
  const { server, url } = await listening();
  const ran: number[] = [];
  releaseStartUpMemoryWhenIdle(server, (ms) => ran.push(ms), 300);
  assert.equal(await (await fetch(url)).text(), 'ok');
  await sleep(600);
  assert.deepEqual(ran, []);
  await closeServer(server);
});

test('a quiet server: one GC gives a grown young generation back, and no gc is left on the global', async () => {
  // Grow the young generation the way start-up does: many objects surviving scavenges.
  let kept: object[] = [];
  for (let i = 0; i < 600_000; i++) kept.push({ i, s: `v${i}` });
  const grown = newSpaceBytes();
  kept = [];
  const { server } = await listening();
  const ran: number[] = [];
  releaseStartUpMemoryWhenIdle(server, (ms) => ran.push(ms), 100);
  await sleep(400);
  if (Number(process.versions.node.split('.')[0]) >= 22) {
    assert.equal(ran.length, 1);
    assert.ok(ran[0]! >= 0);
    assert.ok(newSpaceBytes() < grown, `young generation ${newSpaceBytes()} bytes after, ${grown} before`);
    // Once per process: a later call does nothing.
    assert.equal(releaseStartUpMemory(), null);
  } else {
    // Node 20's V8 has no `last-resort` flavour: nothing is scheduled (its memory reducer does it).
    assert.deepEqual(ran, []);
  }
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
  await closeServer(server);
});
