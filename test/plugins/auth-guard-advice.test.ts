/**
 * auth-guard's 401s say which key was wrong (a provider's key sent to the gateway, a key without
 * "Bearer "), never echoing it; the gateway warns at start when a provider's apiKey is a Tollgate key.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';

let sim: OpenAISimulator;
let tg: TestGateway;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    providers: {
      openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' },
      swapped: { type: 'openai-compatible', baseUrl: sim.baseUrl, apiKey: 'tg_thisIsAGatewayKeyInTheWrongPlace0000000000' },
    },
  });
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

const BODY = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

async function post(headers: Record<string, string>): Promise<{ status: number; message: string; text: string }> {
  const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: BODY });
  const text = await res.text();
  return { status: res.status, message: (JSON.parse(text) as { error: { message: string } }).error.message, text };
}

describe('a provider key sent to the gateway', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['an Anthropic', 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', /looks like an Anthropic API key/],
    ['an OpenAI project', 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', /looks like an OpenAI project API key/],
    ['a legacy OpenAI', 'sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd', /looks like an OpenAI API key/],
    ['a Google', 'AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz01234567', /looks like a Google \(Gemini\) API key/],
  ];
  for (const [vendor, key, expected] of cases) {
    test(`${vendor} key gets a 401 naming it, pointing at tg_ keys, without echoing it`, async () => {
      const res = await post({ authorization: `Bearer ${key}` });
      assert.equal(res.status, 401);
      assert.match(res.message, expected);
      assert.match(res.message, /send a Tollgate key \(tg_\.\.\.\) to the gateway/);
      assert.match(res.message, /tollgate credentials set/);
      assert.ok(!res.text.includes(key.slice(8)), 'no part of the key is echoed');
    });
  }

  test('a 32-character key of no distinctive shape gets the plain message', async () => {
    const res = await post({ authorization: 'Bearer abcdefghijklmnopqrstuvwxyz012345' });
    assert.equal(res.status, 401);
    assert.equal(res.message, 'Invalid API key. Pass a Tollgate key as "Authorization: Bearer <key>" or "x-api-key: <key>".');
  });

  test('the openai SDK given an OpenAI key sees the advice in its APIError', async () => {
    const client = new OpenAI({ apiKey: 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 401);
      assert.match(err.message, /OpenAI project API key/);
      return true;
    });
  });

  test('the Anthropic SDK given an Anthropic key (x-api-key) gets the advice in Anthropic\'s error shape', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'openai/gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), (err: InstanceType<typeof Anthropic.APIError>) => {
      assert.equal(err.status, 401);
      assert.match(err.message, /Anthropic API key/);
      assert.equal((err.error as { type: string }).type, 'error');
      return true;
    });
  });
});

describe('a malformed Authorization header', () => {
  test('a Tollgate key without "Bearer " is told to add the prefix', async () => {
    const res = await post({ authorization: tg.apiKey });
    assert.equal(res.status, 401);
    assert.match(res.message, /has no "Bearer " prefix/);
    assert.ok(!res.text.includes(tg.apiKey.slice(3)));
  });

  test('a provider key without "Bearer " is named as a provider key', async () => {
    const res = await post({ authorization: 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789' });
    assert.match(res.message, /looks like an Anthropic API key/);
  });

  test('another scheme is told to use Bearer', async () => {
    const res = await post({ authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(res.status, 401);
    assert.match(res.message, /must use the Bearer scheme/);
  });

  test('no key at all still says it is missing', async () => {
    const res = await post({});
    assert.match(res.message, /^Missing API key/);
  });
});

describe('a Tollgate key configured as a provider key', () => {
  test('is warned about at start, naming the provider, without the key', () => {
    const warnings = tg.serverLog.map((line) => JSON.parse(line) as { level: string; msg: string; provider?: string }).filter((l) => l.level === 'warn');
    const mine = warnings.filter((w) => w.provider === 'swapped');
    assert.equal(mine.length, 1, JSON.stringify(warnings));
    assert.match(mine[0]!.msg, /provider "swapped" is configured with a Tollgate key \(tg_\.\.\.\)/);
    assert.ok(!tg.serverLog.join('').includes('thisIsAGatewayKey'));
    assert.equal(warnings.filter((w) => w.provider === 'openai').length, 0);
  });
});
