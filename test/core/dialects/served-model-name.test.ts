/**
 * The model an upstream says it served is kept at most `MAX_MODEL_CHARS` long (`servedModelName`,
 * core/dialects/model-field.ts): an upstream answering with a 100,007-character name is served, and
 * the log row, the price lookup and the metrics keep the cut name, translated or passed through,
 * streamed or not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../helpers/test-gateway.ts';
import { HUGE_MODEL_NAME, startHostileGateway, type HostileGateway } from '../../helpers/hostile-upstream.ts';
import { MAX_MODEL_CHARS } from '../../../core/dialects/model-field.ts';

let hostile: HostileGateway;
let tg: TestGateway;

before(async () => {
  hostile = await startHostileGateway({ openaiKey: 'sk-openai-model-test', anthropicKey: 'sk-ant-model-test' });
  tg = hostile.tg;
});
after(() => hostile.close());

const messages = [{ role: 'user', content: 'Say hello.' }];
const cases: Array<[string, string, Record<string, unknown>]> = [
  ['chat, non-stream', '/chat/completions', { model: 'openai/huge-model-name', messages }],
  ['chat, stream', '/chat/completions', { model: 'openai/huge-model-name', messages, stream: true }],
  ['chat to Anthropic, translated, stream', '/chat/completions', { model: 'anthropic/huge-model-name', messages, stream: true }],
  ['Messages, native pass-through, non-stream', '/messages', { model: 'anthropic/huge-model-name', max_tokens: 50, messages }],
  ['Responses, native pass-through, stream', '/responses', { model: 'openai/huge-model-name', input: 'Say hello.', stream: true }],
];

describe('an upstream answering with a 100,007-character model name', () => {
  for (const [name, path, body] of cases) {
    test(`is served, and the gateway keeps the name cut to ${MAX_MODEL_CHARS} characters: ${name}`, async () => {
      const res = await tg.post(path, body);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      const row = await tg.logRow(res.requestId);
      assert.equal(row.status, 200);
      assert.equal(row.model_served, HUGE_MODEL_NAME.slice(0, MAX_MODEL_CHARS));
    });
  }
});
