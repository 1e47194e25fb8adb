/**
 * No upstream text reaches a client or the log with the call's credential in it (issue 14 item 7):
 * an upstream that quotes the shared key in a 400, 429 or 500, or in an in-band stream error, is
 * answered with `[redacted]` in its place, for Chat Completions (translated), Messages (native
 * pass-through to Anthropic) and Responses (native pass-through to OpenAI).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../helpers/test-gateway.ts';
import { startHostileGateway, type HostileGateway } from '../../helpers/hostile-upstream.ts';
import { createByteRedactor, credentialsOf, redactText } from '../../../core/proxy/redact.ts';

const OPENAI_KEY = 'sk-proj-SHARED0penaiKey0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-api03-SHAREDanthropicKey0123456789';

let hostile: HostileGateway;
let tg: TestGateway;

before(async () => {
  hostile = await startHostileGateway({ openaiKey: OPENAI_KEY, anthropicKey: ANTHROPIC_KEY });
  tg = hostile.tg;
});
after(() => hostile.close());

const call = (path: string, body: Record<string, unknown>) => tg.post(path, body);

const messages = [{ role: 'user', content: 'Say hello.' }];
const dialects: Array<[string, string, string, (model: string, stream: boolean) => Record<string, unknown>]> = [
  ['Chat Completions (translated to OpenAI)', '/chat/completions', 'openai', (model, stream) => ({ model, messages, stream })],
  ['Chat Completions (translated to Anthropic)', '/chat/completions', 'anthropic', (model, stream) => ({ model, messages, stream })],
  ['Messages (native Anthropic)', '/messages', 'anthropic', (model, stream) => ({ model, max_tokens: 20, messages, stream })],
  ['Responses (native OpenAI)', '/responses', 'openai', (model, stream) => ({ model, input: 'Say hello.', stream })],
];

describe('an upstream that quotes the key', () => {
  for (const [dialect, path, provider, body] of dialects) {
    for (const [model, stream, status] of [['echo-400', false, 400], ['echo-429', false, 429], ['echo-500', false, 502], ['echo-stream', true, 200]] as const) {
      test(`never shows it: ${dialect}, ${model}${stream ? ' (in-band stream error)' : ''}`, async () => {
        const res = await call(path, body(`${provider}/${model}`, stream));
        const key = provider === 'openai' ? OPENAI_KEY : ANTHROPIC_KEY;
        assert.equal(res.status >= 500 ? 502 : res.status, status, res.text);
        assert.ok(!res.text.includes(key), `the key reached the client: ${res.text}`);
        if (model !== 'echo-500' || res.text.includes('careless')) assert.match(res.text, /\[redacted\]/);
        await tg.logRow(res.requestId);
        const leaked = tg.serverLog.filter((line) => line.includes(key));
        assert.deepEqual(leaked, [], 'the key reached the server log');
      });
    }
  }
});

describe('redaction helpers', () => {
  test('credentialsOf takes header values whole and after the scheme, and query keys, longest first', () => {
    assert.deepEqual(
      credentialsOf({ headers: { authorization: 'Bearer sk-abcdef123', 'x-goog-api-key': 'AIzaSyGoogleKey', 'content-type': 'application/json' }, path: '/v1/x?alt=sse&key=AIza%2Bquery1' }),
      ['Bearer sk-abcdef123', 'AIzaSyGoogleKey', 'AIza%2Bquery1', 'sk-abcdef123', 'AIza+query1'],
    );
    assert.deepEqual(credentialsOf({ headers: { 'x-api-key': 'short' }, path: '/v1/messages' }), []);
  });

  test('redactText replaces every occurrence', () => {
    assert.equal(redactText('key sk-abcdef123 and again sk-abcdef123.', ['sk-abcdef123']), 'key [redacted] and again [redacted].');
  });

  test('the byte redactor catches a key split across reads and holds back only a possible key start', () => {
    const redactor = createByteRedactor(['sk-abcdef123']);
    const out: Buffer[] = [];
    out.push(redactor.push(Buffer.from('data: {"message":"bad key sk-abc')));
    assert.equal(out[0]!.toString(), 'data: {"message":"bad key ', 'the possible key start is held');
    out.push(redactor.push(Buffer.from('def123 given"}\n\n')));
    assert.equal(out[1]!.toString(), '[redacted] given"}\n\n', 'a read ending in a newline is sent whole');
    out.push(redactor.push(Buffer.from('data: sk-')), redactor.end());
    assert.equal(Buffer.concat(out).toString(), 'data: {"message":"bad key [redacted] given"}\n\ndata: sk-');
  });
});
