/**
 * The Anthropic SDK against providers that do not speak Messages: each request is translated to the
 * provider's own wire format (Gemini, Mistral, Ollama simulators), streamed and not, and the answer
 * comes back as a Messages `message` or event stream with the provider's text and usage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { SIM_REPLY as GEMINI_REPLY, startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import {
  MISTRAL_SIM_FINAL, MISTRAL_SIM_KEY, MISTRAL_SIM_REPLY, MISTRAL_SIM_TOOL_ID, startMistralSimulator, type MistralSimulator,
} from '../helpers/mistral-simulator.ts';
import { SIM_REPLY as OLLAMA_REPLY, startOllamaSimulator, type OllamaSimulator } from '../helpers/ollama-simulator.ts';

let gemini: GeminiSimulator;
let mistral: MistralSimulator;
let ollama: OllamaSimulator;
let tg: TestGateway;
let client: Anthropic;

before(async () => {
  [gemini, mistral, ollama] = await Promise.all([startGeminiSimulator(), startMistralSimulator(), startOllamaSimulator()]);
  tg = await startTestGateway({
    providers: {
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gm-upstream-key' },
      mistral: { type: 'mistral', baseUrl: mistral.baseUrl, apiKey: MISTRAL_SIM_KEY },
      ollama: { type: 'ollama', baseUrl: ollama.baseUrl },
    },
  });
  client = new Anthropic({ apiKey: tg.apiKey, baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
});
after(async () => {
  await tg.close();
  await Promise.all([gemini.close(), mistral.close(), ollama.close()]);
});

const cases: Array<[string, string, string]> = [
  ['Gemini', 'gemini/gemini-2.5-flash', GEMINI_REPLY],
  ['Mistral', 'mistral/mistral-small-latest', MISTRAL_SIM_REPLY],
  ['Ollama', 'ollama/llama3.2', OLLAMA_REPLY],
];

for (const [name, model, reply] of cases) {
  describe(`messages translated to ${name}`, () => {
    test('answers a message with the provider\'s text, a stop reason and usage', async () => {
      const { data: message, response } = await client.messages
        .create({ model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }] })
        .withResponse();
      assert.equal(message.type, 'message');
      assert.deepEqual(message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join(''), reply);
      assert.equal(message.stop_reason, 'end_turn');
      assert.ok(message.usage.output_tokens > 0);
      const row = await tg.logRow(response.headers.get('x-request-id')!);
      assert.equal(row.endpoint, 'messages.create');
      assert.equal(row.provider, model.slice(0, model.indexOf('/')));
      assert.equal(row.completion_tokens, message.usage.output_tokens);
    });

    test('streams the answer as Messages events', async () => {
      const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }] });
      const kinds: string[] = [];
      stream.on('streamEvent', (event) => kinds.push(event.type));
      let text = '';
      stream.on('text', (piece) => (text += piece));
      const final = await stream.finalMessage();
      assert.equal(text, reply);
      assert.equal(kinds[0], 'message_start');
      assert.deepEqual(kinds.slice(-2), ['message_delta', 'message_stop']);
      assert.ok(kinds.includes('content_block_delta'));
      assert.ok(final.usage.output_tokens > 0);
    });
  });
}

describe('a tool round trip through translation', () => {
  test('tool_use comes back from a chat tool call, and the tool_result reaches the provider as a tool message', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const stream = client.messages.stream({ model: 'mistral/sim-tool', max_tokens: 128, tools, messages: [question] });
    const first = await stream.finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: unknown };
    assert.deepEqual([use.id, use.name, use.input], [MISTRAL_SIM_TOOL_ID, 'get_weather', { city: 'Paris' }]);

    const second = await client.messages.create({
      model: 'mistral/sim-tool', max_tokens: 128, tools,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18 °C' }] }],
    });
    assert.deepEqual(second.content, [{ type: 'text', text: MISTRAL_SIM_FINAL }]);
    const sent = mistral.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body!.messages as Array<Record<string, unknown>>;
    assert.deepEqual(sent.at(-1), { role: 'tool', content: '18 °C', tool_call_id: MISTRAL_SIM_TOOL_ID, name: 'get_weather' });
  });
});
