/**
 * The shared upstream-error policy, driven through each provider's own error-body reader: one table
 * of status × provider body shape → the client's status, type, code and headers. The same upstream
 * situation must give the same client error whichever provider sent it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayError } from '../../core/errors.ts';
import type { UpstreamHeaders } from '../../plugins/provider-router/providers/canonical.ts';
import { mapOpenAIError } from '../../plugins/provider-router/providers/openai/index.ts';
import { mapAnthropicError } from '../../plugins/provider-router/providers/anthropic/errors.ts';
import { mapGeminiError } from '../../plugins/provider-router/providers/gemini/errors.ts';
import { mapMistralError } from '../../plugins/provider-router/providers/mistral/errors.ts';
import { mapOllamaError } from '../../plugins/provider-router/providers/ollama/errors.ts';
import { upstreamErrorFor } from '../../plugins/provider-router/providers/upstream-error-policy.ts';

type Mapper = (provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders) => GatewayError;

const mappers: Record<string, Mapper> = {
  openai: mapOpenAIError, anthropic: mapAnthropicError, gemini: mapGeminiError, mistral: mapMistralError, ollama: mapOllamaError,
};

/** Each provider's own error body for a message (and, where the shape has one, a type / code). */
const body: Record<string, (message: string, type?: string, code?: string) => string> = {
  openai: (message, type = 'invalid_request_error', code) => JSON.stringify({ error: { message, type, param: null, code: code ?? null } }),
  anthropic: (message, type = 'invalid_request_error') => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' }),
  gemini: (message, type = 'INVALID_ARGUMENT') => JSON.stringify({ error: { code: 400, message, status: type } }),
  mistral: (message, type = 'invalid_request_error', code) => JSON.stringify({ object: 'error', message, type, param: null, code: code ?? null }),
  ollama: (message) => JSON.stringify({ error: message }),
};

interface Expected {
  status: number;
  type: string;
  code: string;
  headers?: Record<string, string>;
}

interface Case {
  title: string;
  provider: string;
  status: number;
  body: string;
  headers?: UpstreamHeaders;
  expect: Expected;
}

const NO_RETRY = { 'x-should-retry': 'false' };
const AUTH: Expected = { status: 401, type: 'upstream_error', code: 'upstream_authentication_error', headers: NO_RETRY };
const PERMISSION: Expected = { status: 403, type: 'upstream_error', code: 'upstream_permission_error', headers: NO_RETRY };
const MODEL: Expected = { status: 404, type: 'not_found_error', code: 'model_not_found', headers: {} };
const QUOTA = (status: number): Expected => ({ status, type: 'upstream_error', code: 'insufficient_quota', headers: NO_RETRY });
const RATE_LIMITED: Expected = { status: 429, type: 'upstream_error', code: 'rate_limit_exceeded', headers: { 'retry-after': '7', 'retry-after-ms': '7000' } };
const OVERLOADED: Expected = { status: 503, type: 'upstream_error', code: 'overloaded', headers: { 'retry-after': '3', 'retry-after-ms': '3000' } };

const KEY = 'sk-proj-AbCdEf0123456789';
const providers = Object.keys(mappers);

const cases: Case[] = [
  // 401 / 403: one code per meaning from every provider, whatever code the upstream used.
  ...providers.map((provider): Case => ({
    title: 'a 401 is upstream_authentication_error', provider, status: 401,
    body: body[provider]!(`Incorrect API key provided: ${KEY}`, provider === 'gemini' ? 'UNAUTHENTICATED' : 'authentication_error', 'invalid_api_key'),
    expect: AUTH,
  })),
  ...providers.map((provider): Case => ({
    title: 'a 403 is upstream_permission_error', provider, status: 403,
    body: body[provider]!(`The key ${KEY} may not use this model`, provider === 'gemini' ? 'PERMISSION_DENIED' : 'permission_error'),
    expect: PERMISSION,
  })),
  // What the request caused (a model the account may not use, an endpoint a restricted key may not
  // call) against what is about the key itself (deactivated, disabled, blocked), whatever the status.
  { title: 'a 403 "Project … does not have access to model …" is the request\'s', provider: 'openai', status: 403, body: body.openai!('Project `proj_abc` does not have access to model `gpt-4o`', 'invalid_request_error', 'model_not_found'), expect: PERMISSION },
  { title: 'a 401 for missing scopes is the request\'s', provider: 'openai', status: 401, body: body.openai!('You have insufficient permissions for this operation. Missing scopes: api.responses.write.', 'invalid_request_error'), expect: { ...PERMISSION, status: 401 } },
  { title: 'a 403 account_deactivated is the key\'s', provider: 'openai', status: 403, body: body.openai!('This key is associated with a deactivated account.', 'invalid_request_error', 'account_deactivated'), expect: { ...AUTH, status: 403 } },
  { title: 'a 400 "This organization has been disabled." is the key\'s', provider: 'anthropic', status: 400, body: body.anthropic!('This organization has been disabled.'), expect: { ...AUTH, status: 400 } },
  { title: 'a 403 naming a disabled organization is the key\'s', provider: 'anthropic', status: 403, body: body.anthropic!('This organization has been disabled.', 'permission_error'), expect: { ...AUTH, status: 403 } },
  { title: 'a 403 quoting those words later is still the request\'s', provider: 'anthropic', status: 403, body: body.anthropic!('model: This organization has been disabled', 'permission_error'), expect: PERMISSION },
  ...['API_KEY_SERVICE_BLOCKED', 'SERVICE_DISABLED', 'CONSUMER_SUSPENDED'].map((reason): Case => ({
    title: `a 403 with reason ${reason} is the key's`, provider: 'gemini', status: 403,
    body: JSON.stringify({ error: { code: 403, message: 'Permission denied.', status: 'PERMISSION_DENIED', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] } }),
    expect: { ...AUTH, status: 403 },
  })),
  { title: 'a 403 for a leaked key is the key\'s', provider: 'gemini', status: 403, body: body.gemini!('Your API key was reported as leaked. Please use another API key.', 'PERMISSION_DENIED'), expect: { ...AUTH, status: 403 } },
  {
    title: "Gemini's 400 API_KEY_INVALID keeps 400 but is an authentication error", provider: 'gemini', status: 400,
    body: JSON.stringify({ error: { code: 400, message: `API key not valid: ${KEY}`, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }),
    expect: { ...AUTH, status: 400 },
  },
  // 404 about the model.
  { title: 'a 404 model_not_found is model_not_found', provider: 'openai', status: 404, body: body.openai!('The model `x` does not exist', 'invalid_request_error', 'model_not_found'), expect: MODEL },
  { title: 'a 404 is the model (fixed path)', provider: 'anthropic', status: 404, body: body.anthropic!('model: x', 'not_found_error'), expect: MODEL },
  { title: 'a 404 NOT_FOUND is the model', provider: 'gemini', status: 404, body: body.gemini!('models/x is not found', 'NOT_FOUND'), expect: MODEL },
  { title: 'a 400 invalid_model is the model', provider: 'mistral', status: 400, body: body.mistral!('Invalid model: x', 'invalid_model', '1500'), expect: MODEL },
  { title: 'a 404 "model not found" is the model', provider: 'ollama', status: 404, body: body.ollama!('model "x" not found, try pulling it first'), expect: MODEL },
  { title: "a proxy's 404 is not the model", provider: 'ollama', status: 404, body: '404 page not found', expect: { status: 404, type: 'upstream_error', code: 'upstream_error', headers: NO_RETRY } },
  // 408 / 409: kept, retryable.
  ...providers.flatMap((provider) => [408, 409].map((status): Case => ({
    title: `a ${status} keeps its status and stays retryable`, provider, status, body: body[provider]!('try again'),
    expect: { status, type: 'upstream_error', code: { openai: 'upstream_error', anthropic: 'invalid_request_error', gemini: 'invalid_argument', mistral: 'invalid_request_error', ollama: 'upstream_error' }[provider]!, headers: {} },
  }))),
  // 422: a validation error names the client's field.
  {
    title: 'a 422 is 400 invalid_request naming the field', provider: 'mistral', status: 422,
    body: JSON.stringify({ detail: [{ loc: ['body', 'random_seed'], msg: 'Input should be less than 10' }] }),
    expect: { status: 400, type: 'invalid_request_error', code: 'invalid_request', headers: NO_RETRY },
  },
  // 429: rate limits carry the delay, quotas say "do not retry".
  { title: 'a 429 passes retry-after', provider: 'openai', status: 429, body: body.openai!('Rate limit reached', 'requests', 'rate_limit_exceeded'), headers: { 'retry-after': '7' }, expect: RATE_LIMITED },
  { title: 'a 429 passes retry-after', provider: 'anthropic', status: 429, body: body.anthropic!('Slow down', 'rate_limit_error'), headers: { 'retry-after': '7' }, expect: RATE_LIMITED },
  {
    title: 'a 429 turns RetryInfo into retry-after', provider: 'gemini', status: 429,
    body: JSON.stringify({ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '6.2s' }] } }),
    expect: { ...RATE_LIMITED, headers: { 'retry-after': '7', 'retry-after-ms': '6200' } },
  },
  { title: 'a 429 takes ratelimitbysize-reset', provider: 'mistral', status: 429, body: body.mistral!('Requests rate limit exceeded', 'rate_limit_error'), headers: { 'ratelimitbysize-reset': '7' }, expect: RATE_LIMITED },
  { title: 'a 429 passes retry-after-ms before retry-after', provider: 'ollama', status: 429, body: body.ollama!('busy'), headers: { 'retry-after-ms': '6500', 'retry-after': '60' }, expect: { ...RATE_LIMITED, headers: { 'retry-after': '7', 'retry-after-ms': '6500' } } },
  { title: 'a 429 with an unusable retry-after has no delay', provider: 'anthropic', status: 429, body: body.anthropic!('Slow down', 'rate_limit_error'), headers: { 'retry-after': 'soon' }, expect: { ...RATE_LIMITED, headers: {} } },
  { title: 'a quota 429 is not retryable', provider: 'openai', status: 429, body: body.openai!('You exceeded your current quota', 'insufficient_quota', 'insufficient_quota'), headers: { 'retry-after': '7' }, expect: QUOTA(429) },
  {
    title: 'the spend cap is not retryable', provider: 'anthropic', status: 429,
    body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'limit', details: { error_code: 'enforced_spend_limit_reached' } } }),
    expect: QUOTA(429),
  },
  {
    title: 'a per-day quota is not retryable', provider: 'gemini', status: 429,
    body: JSON.stringify({ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerDayPerProjectPerModel' }] }] } }),
    expect: QUOTA(429),
  },
  { title: 'a spent monthly budget is not retryable', provider: 'mistral', status: 429, body: body.mistral!('limit', 'rate_limit_error'), headers: { 'x-ratelimitbysize-remaining-month': '0' }, expect: QUOTA(429) },
  { title: 'a 402 usage limit is not retryable', provider: 'ollama', status: 402, body: body.ollama!('weekly usage limit'), expect: QUOTA(402) },
  // 503 (and Anthropic's 529): overloaded, with the delay.
  ...providers.map((provider): Case => ({ title: 'a 503 is 503 overloaded', provider, status: 503, body: body[provider]!('overloaded', provider === 'gemini' ? 'UNAVAILABLE' : 'server_error'), headers: { 'retry-after': '3' }, expect: OVERLOADED })),
  { title: 'a 529 is 503 overloaded', provider: 'anthropic', status: 529, body: body.anthropic!('Overloaded', 'overloaded_error'), headers: { 'retry-after': ['3'] }, expect: OVERLOADED },
  // Other 5xx: 502 with the provider's code.
  { title: 'a 500 is 502 keeping the code', provider: 'openai', status: 500, body: body.openai!('boom', 'server_error', 'server_error'), expect: { status: 502, type: 'upstream_error', code: 'server_error', headers: {} } },
  { title: 'a 500 is 502 keeping the type', provider: 'anthropic', status: 500, body: body.anthropic!('boom', 'api_error'), expect: { status: 502, type: 'upstream_error', code: 'api_error', headers: {} } },
  { title: 'a 504 is 502 keeping the status name', provider: 'gemini', status: 504, body: body.gemini!('deadline', 'DEADLINE_EXCEEDED'), expect: { status: 502, type: 'upstream_error', code: 'deadline_exceeded', headers: {} } },
  { title: 'a 502 page is 502', provider: 'mistral', status: 502, body: '<html>Bad gateway</html>', expect: { status: 502, type: 'upstream_error', code: 'upstream_error', headers: {} } },
  { title: 'a 500 is 502', provider: 'ollama', status: 500, body: body.ollama!('runner died'), expect: { status: 502, type: 'upstream_error', code: 'upstream_error', headers: {} } },
  // Other 4xx: kept, not retryable, the provider's code kept.
  { title: 'a 400 keeps the code', provider: 'mistral', status: 400, body: body.mistral!('Expected last role to be user', 'invalid_request_message_order', '3230'), expect: { status: 400, type: 'upstream_error', code: 'invalid_request_message_order', headers: NO_RETRY } },
  { title: 'a numeric code is kept as text', provider: 'openai', status: 402, body: JSON.stringify({ error: { code: 402, message: 'Insufficient credits' } }), expect: { status: 402, type: 'upstream_error', code: '402', headers: NO_RETRY } },
];

describe('upstream-error policy, through each provider\'s body reader', () => {
  for (const c of cases) {
    test(`${c.provider}: ${c.title}`, () => {
      const err = mappers[c.provider]!(c.provider, 'some-model', c.status, c.body, c.headers ?? {});
      assert.deepEqual(
        { status: err.status, type: err.type, code: err.code, headers: err.headers },
        { status: c.expect.status, type: c.expect.type, code: c.expect.code, headers: c.expect.headers ?? {} },
      );
      if (c.expect.code === 'model_not_found') assert.equal(err.param, 'model');
    });
  }

  test('a 401 or 403 message never echoes the upstream text, which can quote the key', () => {
    for (const provider of providers) {
      for (const status of [401, 403]) {
        const err = mappers[provider]!(provider, 'm', status, body[provider]!(`Incorrect API key provided: ${KEY}`), {});
        assert.doesNotMatch(err.message, /sk-/, `${provider} ${status}`);
      }
      const refused = mappers[provider]!(provider, 'm', 401, body[provider]!(`Incorrect API key provided: ${KEY}`), {});
      assert.equal(refused.message, `Provider "${provider}" rejected the gateway's credential (401). An operator must fix the provider key.`);
    }
  });

  test('a 403 the request caused says so, naming the model, and does not blame the gateway\'s key', () => {
    const err = mapOpenAIError('openai', 'gpt-4o', 403, body.openai!('Project `proj_abc` does not have access to model `gpt-4o`', 'invalid_request_error', 'model_not_found'), {});
    assert.equal(
      err.message,
      'Provider "openai" refused this request (403): the gateway\'s account there may not do what it asks (e.g. use the model "gpt-4o"). '
        + 'This is about the request, not a bad gateway key; other requests are served as usual.',
    );
    assert.doesNotMatch(err.message, /credential|operator must fix/);
  });

  test('other errors quote the upstream text, ending with a period only when the gateway ends the sentence', () => {
    assert.equal(mapOllamaError('ollama', 'm', 400, body.ollama!('bad input'), {}).message, 'Provider "ollama" answered 400: bad input');
    assert.equal(mapAnthropicError('anthropic', 'm', 400, body.anthropic!('bad input'), {}).message, 'Provider "anthropic" answered 400: bad input (request-id req_1).');
    assert.equal(mapMistralError('mistral', 'm', 500, '', {}).message, 'Provider "mistral" answered 500.');
    assert.equal(
      mapOllamaError('ollama', 'llama9', 404, body.ollama!('model "llama9" not found'), {}).message,
      'The model "llama9" does not exist at provider "ollama" (upstream says: model "llama9" not found). An operator can pull it with "ollama pull llama9".',
    );
  });

  test('a retry-after given as an HTTP date becomes a delay in seconds', () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    // The delay is counted from the clock's reading inside the call: between these two.
    const fromMs = Date.now();
    const err = upstreamErrorFor('p', 'm', 429, { message: null, type: null, code: null }, { 'retry-after': at });
    const toMs = Date.now();
    const delayMs = Number(err.headers['retry-after-ms']);
    assert.ok(delayMs >= Date.parse(at) - toMs && delayMs <= Date.parse(at) - fromMs, `${delayMs} ms to ${at}`);
    assert.equal(err.headers['retry-after'], String(Math.ceil(delayMs / 1000)));
  });

  test('a stream error event says "failed mid-stream" and follows the same rules', () => {
    const err = upstreamErrorFor('p', 'm', 529, { message: 'Overloaded', type: 'overloaded_error', code: 'overloaded_error' }, {}, 'stream');
    assert.deepEqual([err.status, err.code, err.message], [503, 'overloaded', 'Provider "p" failed mid-stream: Overloaded']);
  });
});
