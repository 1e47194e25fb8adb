/**
 * A stream still running when the shutdown drain times out (issue 14 item 11, second half) ends with
 * a `gateway_shutdown` error event, is billed for what was generated so far (counted locally) and is
 * logged with that code and status 503, not as a `502 upstream_unreachable` at $0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { openTestStore } from '../../helpers/test-store.ts';

test('a stream cut by the shutdown drain is billed for what was sent and logged as gateway_shutdown', async () => {
  const sim = await startOpenAISimulator({ dripMs: 20 });
  const dataDir = await dataDirWithPrices([{ model: 'sim-drip', provider: 'openai', input: 1, output: 2 }]);
  const tg = await startTestGateway({
    dataDir,
    server: { drainTimeoutMs: 300 },
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shutdown' } },
  });
  let closing: Promise<void> | null = null;
  try {
    const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/sim-drip', messages: [{ role: 'user', content: 'Count slowly.' }], stream: true }),
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id')!;
    const decoder = new TextDecoder();
    let text = '';
    for await (const part of res.body!) {
      text += decoder.decode(part as Uint8Array, { stream: true });
      // Shut down once a few content chunks were relayed; the stream (400 chunks, 8 s) outlives the drain.
      if (!closing && (text.match(/"content"/g) ?? []).length >= 5) closing = tg.close();
    }
    await closing;
    assert.match(text, /"code":"gateway_shutdown"/, 'the stream ends with the shutdown error event');

    const store = await openTestStore(dataDir);
    const row = await store.db.selectFrom('llm_requests').select(['status', 'error_code', 'completion_tokens', 'usage_estimated', 'cost_nanos'])
      .where('request_id', '=', requestId).executeTakeFirst();
    await store.close();
    assert.ok(row, 'the cut stream was logged');
    assert.equal(row.error_code, 'gateway_shutdown');
    assert.equal(row.status, 503);
    assert.equal(row.usage_estimated, 1);
    assert.ok((row.completion_tokens ?? 0) > 0, `completion tokens ${row.completion_tokens}`);
    assert.ok((row.cost_nanos ?? 0) > 0, `cost ${row.cost_nanos}`);
  } finally {
    if (!closing) await tg.close();
    await sim.close();
  }
});
