/**
 * `POST /api/v1/responses` with the official `openai` SDK (`client.responses.create` / `.stream`):
 * natively passed through to an OpenAI Responses simulator (bytes unchanged but the model, usage
 * billed from `response.completed`), and translated to an Anthropic-format simulator.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import {
  RESPONSES_PIECES, RESPONSES_REPLY, RESPONSES_TOOL_ANSWER, RESPONSES_USAGE, startResponsesSimulator, type ResponsesSimulator,
} from '../helpers/openai-responses-simulator.ts';
import { SIM_REPLY as ANTHROPIC_REPLY, SIM_TOOL_ANSWER, SIM_USAGE as ANTHROPIC_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';

let responses: ResponsesSimulator;
let anthropic: AnthropicSimulator;
let tg: TestGateway;
let client: OpenAI;

before(async () => {
  responses = await startResponsesSimulator();
  anthropic = await startAnthropicSimulator();
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-5-mini', provider: 'openai', input: 0.25, output: 2, cachedInput: 0.025 }]),
    providers: {
      openai: { type: 'openai', baseUrl: responses.baseUrl, apiKey: 'sk-openai-upstream' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
    },
  });
  client = tg.client;
});
after(async () => {
  await tg.close();
  await responses.close();
  await anthropic.close();
});

describe('responses to a native OpenAI upstream', () => {
  test('answers with the upstream\'s response, passes the body through and bills its usage', async () => {
    const { data: response, response: raw } = await client.responses
      .create({ model: 'openai/gpt-5-mini', input: 'Say hello', instructions: 'Be brief.', store: false, metadata: { team: 'a' } })
      .withResponse();
    assert.equal(response.output_text, RESPONSES_REPLY);
    const sent = responses.requests.at(-1)!;
    assert.deepEqual(sent.body, { model: 'gpt-5-mini', input: 'Say hello', instructions: 'Be brief.', store: false, metadata: { team: 'a' } });
    assert.equal(sent.headers.authorization, 'Bearer sk-openai-upstream');
    const row = await tg.logRow(raw.headers.get('x-request-id')!);
    assert.equal(row.endpoint, 'responses.create');
    assert.equal(row.prompt_tokens, RESPONSES_USAGE.input_tokens);
    assert.equal(row.cached_tokens, RESPONSES_USAGE.input_tokens_details.cached_tokens);
    assert.equal(row.completion_tokens, RESPONSES_USAGE.output_tokens);
    // (21 − 5) × $0.25 + 5 × $0.025 + 13 × $2 per million, in nano-USD.
    assert.equal(row.cost_nanos, 16 * 250 + 5 * 25 + 13 * 2000);
  });

  test('relays the event stream the SDK accumulates, and bills it', async () => {
    const stream = client.responses.stream({ model: 'openai/gpt-5-mini', input: 'Say hello' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    assert.deepEqual(deltas, RESPONSES_PIECES);
    assert.equal(final.usage?.output_tokens, RESPONSES_USAGE.output_tokens);
  });

  test('round-trips a function call, with previous_response_id kept for the upstream', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'openai/sim-tool', input: 'Weather in Paris?', tools });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    const second = await client.responses.create({
      model: 'openai/sim-tool', tools, previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 °C' }],
    });
    assert.equal(second.output_text, RESPONSES_TOOL_ANSWER);
    assert.equal(responses.requests.at(-1)!.body!.previous_response_id, first.id);
  });
});

describe('responses translated to Anthropic', () => {
  test('answers a response from an Anthropic message, with usage', async () => {
    const response = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello', instructions: 'Be brief.', max_output_tokens: 100 });
    assert.equal(response.output_text, ANTHROPIC_REPLY);
    assert.equal(response.status, 'completed');
    const total = ANTHROPIC_USAGE.input_tokens + ANTHROPIC_USAGE.cache_read_input_tokens + ANTHROPIC_USAGE.cache_creation_input_tokens;
    assert.equal(response.usage?.input_tokens, total);
    assert.equal(response.usage?.output_tokens, ANTHROPIC_USAGE.output_tokens);
    const sent = anthropic.lastMessages().body!;
    assert.deepEqual(sent.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.equal(sent.max_tokens, 100);
  });

  test('streams Responses events the SDK accumulates', async () => {
    const final = await client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello' }).finalResponse();
    assert.equal(final.output_text, ANTHROPIC_REPLY);
    assert.equal(final.usage?.output_tokens, ANTHROPIC_USAGE.output_tokens);
  });

  test('a function-call loop round-trips through the translation', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const question = { role: 'user' as const, content: 'Weather in Paris and London?' };
    const first = await client.responses.create({ model: 'anthropic/sim-tool', input: [question], tools });
    const calls = first.output.filter((item) => item.type === 'function_call');
    assert.equal(calls.length, 2);
    const second = await client.responses.create({
      model: 'anthropic/sim-tool', tools,
      input: [question, ...calls, ...calls.map((c) => ({ type: 'function_call_output' as const, call_id: (c as { call_id: string }).call_id, output: '18' }))],
    });
    assert.equal(second.output_text, SIM_TOOL_ANSWER);
  });

  test('a previous_response_id the gateway never stored is refused as OpenAI refuses it (400 previous_response_not_found)', async () => {
    await assert.rejects(client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Go on', previous_response_id: 'resp_x' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.deepEqual(err.error, {
        message: 'Previous response with id \'resp_x\' not found.', type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id',
      });
      return true;
    });
  });
});
