/**
 * SIGTERM under load: the real process stops accepting, lets in-flight streams finish, flushes every
 * queued request-log row, and exits 0. The logger is configured never to flush on its own, so every
 * row on disk was written by the shutdown flush.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { openTestStore } from '../helpers/test-store.ts';
import { startOpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { defaultManifest } from '../../core/default-manifest.ts';

test('SIGTERM during load drains in-flight streams, writes every queued log row and exits 0', async () => {
  const sim = await startOpenAISimulator({ dripMs: 2 });
  const dataDir = tempDir();
  const manifest = structuredClone(defaultManifest) as { plugins: Array<{ name: string; config: Record<string, unknown> }> };
  manifest.plugins.find((p) => p.name === 'logger')!.config = { batchSize: 5_000, flushIntervalMs: 600_000 };
  await cliJson(['users', 'create', '--name', 'load'], { dataDir });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', 'load'], { dataDir });
  const gateway = await startGatewayProcess({ dataDir, manifest, env: { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' } });
  const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  const completed: string[] = [];
  const one = async (i: number) => {
    if (i % 2 === 0) {
      const { response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).withResponse();
      completed.push(response.headers.get('x-request-id')!);
    } else {
      const { data, response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, stream: true }).withResponse();
      for await (const _ of data);
      completed.push(response.headers.get('x-request-id')!);
    }
  };
  // Load: 20 workers issuing requests back to back until the gateway stops taking them.
  let stopping = false;
  let counter = 0;
  const worker = async () => {
    while (!stopping) {
      try {
        await one(counter++);
      } catch {
        if (stopping) return;
        throw new Error('a request failed before shutdown');
      }
    }
  };
  const workers = Array.from({ length: 20 }, worker);
  while (completed.length < 200) await new Promise((r) => setTimeout(r, 10));

  // Streams still running when the signal arrives must finish and be logged. The signal is sent once
  // their headers came (the gateway is streaming them), not after a fixed wait a busy machine may
  // need more than to let them in.
  const started = await Promise.all(Array.from({ length: 3 }, () => client.chat.completions.create({ model: 'openai/sim-drip', messages, stream: true }).withResponse()));
  const slow = started.map(async ({ data, response }) => {
    let pieces = 0;
    let finish: string | null = null;
    for await (const chunk of data) {
      if (chunk.choices[0]?.delta.content) pieces++;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { id: response.headers.get('x-request-id')!, pieces, finish };
  });
  stopping = true;
  const exitCode = await gateway.stop('SIGTERM');
  await Promise.allSettled(workers);
  const drained = await Promise.all(slow);
  await sim.close();

  assert.equal(exitCode, 0, gateway.output());
  assert.match(gateway.output(), /Received SIGTERM/);
  for (const s of drained) {
    assert.equal(s.pieces, 400, 'in-flight stream ran to its end');
    assert.equal(s.finish, 'stop');
  }
  const store = await openTestStore(dataDir);
  const rows = await store.db.selectFrom('llm_requests').select('request_id').where('status', '=', 200).execute();
  await store.close();
  const logged = new Set(rows.map((row) => row.request_id));
  const expected = [...completed, ...drained.map((s) => s.id)];
  const missing = expected.filter((id) => !logged.has(id));
  assert.ok(expected.length >= 203);
  assert.deepEqual(missing, [], `${missing.length} of ${expected.length} completed requests were not logged`);
});
