/**
 * The small `/api/v1` gaps clients hit: `models.retrieve` (`GET /api/v1/models/{model}`) through the
 * official `openai` SDK, and a path no endpoint has, which answers a 404 naming the path and the
 * endpoints there are (not a "model not found" look-alike), and is logged and counted in `/metrics`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startOllamaSimulator, type OllamaSimulator } from '../helpers/ollama-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { MAX_MODEL_CHARS } from '../../core/dialects/model-field.ts';

let openai: OpenAISimulator;
let ollama: OllamaSimulator;
let tg: TestGateway;

before(async () => {
  openai = await startOpenAISimulator({ models: ['gpt-4o-mini', 'llama3'] });
  ollama = await startOllamaSimulator({ models: ['llama3', 'qwen3:8b'] });
  tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-test' }, ollama: { type: 'ollama', baseUrl: ollama.baseUrl } },
    router: { models: { 'team-default': 'openai/gpt-4o-mini' } },
  });
});

after(async () => {
  await tg?.close();
  await openai?.close();
  await ollama?.close();
});

describe('GET /api/v1/models/{model}', () => {
  test('the SDK retrieves a provider/model id (its slash percent-encoded by the SDK)', async () => {
    const model = await tg.client.models.retrieve('openai/gpt-4o-mini');
    assert.equal(model.id, 'openai/gpt-4o-mini');
    assert.equal(model.object, 'model');
    assert.equal(model.owned_by, 'system');
  });

  test('a raw slash, a manifest model name and a bare id one provider lists', async () => {
    const get = (path: string) => fetch(`${tg.gateway.origin}/api/v1/models/${path}`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    const raw = await get('openai/gpt-4o-mini');
    assert.equal(raw.status, 200);
    const idOf = async (res: Response) => ((await res.json()) as { id: string }).id;
    assert.equal(await idOf(raw), 'openai/gpt-4o-mini');
    assert.equal(await idOf(await get('team-default')), 'team-default');
    assert.equal(await idOf(await get('gpt-4o-mini')), 'openai/gpt-4o-mini');
  });

  test('a bare id several providers list is a 400 naming them; an unknown model a 404', async () => {
    const ambiguous = await tg.client.models.retrieve('llama3').catch((e: unknown) => e);
    assert.ok(ambiguous instanceof OpenAI.BadRequestError);
    assert.match(ambiguous.message, /ollama\/llama3/);
    assert.match(ambiguous.message, /openai\/llama3/);
    const missing = await tg.client.models.retrieve('openai/gpt-9').catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.NotFoundError);
    assert.equal(missing.code, 'model_not_found');
  });

  test('a path model longer than a body may carry is logged cut to MAX_MODEL_CHARS, as a body\'s would be refused', async () => {
    const name = `openai/${'x'.repeat(5000)}`;
    const res = await fetch(`${tg.gateway.origin}/api/v1/models/${name}`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    assert.equal(res.status, 404);
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.equal(row.model_requested, name.slice(0, MAX_MODEL_CHARS));
  });

  test('without a key it is a 401, as the list is', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/models/openai/gpt-4o-mini`);
    assert.equal(res.status, 401);
  });
});

describe('an unknown path under /api', () => {
  test('answers 404 endpoint_not_found naming the path and the /api/v1 endpoints, in OpenAI\'s error shape', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' }, body: '{}',
    });
    assert.equal(res.status, 404);
    const body = await res.json() as { error: { code: string; type: string; message: string; param: null } };
    assert.equal(body.error.code, 'endpoint_not_found');
    assert.equal(body.error.type, 'not_found_error');
    assert.match(body.error.message, /POST \/api\/v1\/v1\/chat\/completions/);
    for (const endpoint of ['POST /api/v1/chat/completions', 'POST /api/v1/messages', 'POST /api/v1/responses', 'GET /api/v1/models']) {
      assert.ok(body.error.message.includes(endpoint), `${endpoint} in: ${body.error.message}`);
    }
    assert.doesNotMatch(body.error.message, /does not exist or is not available/);
    const row = await tg.logRow(res.headers.get('x-request-id')!);
    assert.equal(row.endpoint, 'endpoint.unknown');
    assert.equal(row.status, 404);
    assert.equal(row.error_code, 'endpoint_not_found');
    assert.equal(row.gateway_user_id, tg.userId);
  });

  test('the SDK sees a NotFoundError, and /metrics counts the request under endpoint.unknown', async () => {
    const err = await tg.client.get('/embeddings-v9').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.code, 'endpoint_not_found');
    const scrape = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
    const line = scrape.split('\n').find((l) => l.startsWith('tollgate_requests_total{') && l.includes('operation="endpoint.unknown"') && l.includes('status="404"'));
    assert.ok(line, 'a tollgate_requests_total line for endpoint.unknown 404');
    assert.ok(Number(line.split(' ').at(-1)) >= 1);
  });

  test('without a key it is the same 404 (the endpoint list is public), and outside /api a plain 404', async () => {
    const anonymous = await fetch(`${tg.gateway.origin}/api/v1/nope`);
    assert.equal(anonymous.status, 404);
    assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'endpoint_not_found');
    // An anonymous probe writes no log row (strangers cannot fill the table); a user's does.
    const mine = await fetch(`${tg.gateway.origin}/api/v1/nope`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    await tg.logRow(mine.headers.get('x-request-id')!);
    const anonymousRow = await tg.gateway.store.db.selectFrom('llm_requests').select('id')
      .where('request_id', '=', anonymous.headers.get('x-request-id')!).executeTakeFirst();
    assert.equal(anonymousRow, undefined);
    const outside = await fetch(`${tg.gateway.origin}/v1/chat/completions`, { method: 'POST', body: '{}' });
    assert.equal(outside.status, 404);
    assert.equal(((await outside.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});
