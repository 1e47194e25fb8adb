/**
 * The fuzzer's request generator: case `index` of seed `seed` (prng.ts), a whole HTTP request and
 * what the contract lets it answer. The kinds and their shares: one-field mutations of a valid body
 * (grammar), upstream faults with a valid body, whole-body damage, transport oddities (content types,
 * methods, auth headers, chunked bodies), the GET endpoints with absurd query strings, the admin API
 * with and without a session, oversized bodies and header floods; and (stateful-cases.ts) stored
 * Responses state, the shared key pool and half-open connections.
 *
 * Admin calls with the session only ever change the "victim" user, its key, prices and new users:
 * ids the fuzzer invents are never small positive numbers (those are the fuzz users' own), and logout
 * is sent without the session, so the run keeps its identities to the end.
 */
import type { Rng } from './prng.ts';
import { rngFor } from './prng.ts';
import { MODEL_ENDPOINTS, validBody, type ErrorShape, type ModelEndpoint } from './valid-bodies.ts';
import { mutateField, mutateWhole, type MutatedBody } from './mutate.ts';
import { MAX_BODY_BYTES, type FuzzIdentities } from './fuzz-world.ts';
import { halfOpenCase, keyPoolCase, responsesStateCase } from './stateful-cases.ts';

/** An error answer's rules, when the case's answer has this status (`code`: OpenAI's `error.code`; `says` / `never`: text the message must / must not hold). */
export interface ExpectedError {
  status: number;
  code?: string;
  says?: string;
  never?: string;
}

/** A raw connection's script: `head` sent at once, then `drip` every little while until the gateway closes; it must close within `deadlineMs` (a liveness bound). */
export interface HalfOpenPlan {
  head: string;
  drip: string;
  deadlineMs: number;
}

/** One request and what may answer it. */
export interface FuzzCase {
  index: number;
  kind: string;
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[]>;
  body: Buffer | null;
  /** Send the body in two writes with chunked transfer encoding. */
  chunked: boolean;
  /** The error shape of the endpoint (by path). */
  shape: ErrorShape;
  /** Statuses the contract gives this request; null when several outcomes are right. */
  expect: readonly number[] | null;
  /** The request names a misbehaving upstream: 502, 503, 504, 529 (and the upstream's own relayed 500) are the contract's answers. */
  upstreamFault: boolean;
  /** Short words on what was done, for the report. */
  description: string;
  /** Rules on the error answer by status. */
  errors?: readonly ExpectedError[];
  /** Text no answer to this case may hold (another user's stored items). */
  forbidden?: readonly string[];
  /** Sent as a raw half-open connection instead (`method` is `RAW`). */
  halfOpen?: HalfOpenPlan;
}

type Headers = Record<string, string | string[]>;

const ABSURD_QUERIES = [
  'from=9999-12-31T23:59:59.999Z&to=9999-12-31T23:59:59.999Z', 'to=9999-12-31', 'from=9999-12-31', 'from=-271821-04-20T00:00:00Z&to=275760-09-13T00:00:00Z',
  'from=0000-00-00&to=0000-00-00', 'from=2026-02-30&to=2025-01-01', 'from=1970-01-01&to=9999-12-31', 'from=NaN&to=Infinity', 'from=1e308', 'from=-1',
  'limit=-1', 'limit=0', 'limit=1e308', 'limit=NaN', 'limit=99999999999999999999', 'offset=-5', 'offset=1e400', 'cursor=%00%ff%fe', `cursor=${'A'.repeat(4_000)}`,
  'cursor=eyJpZCI6LTF9', 'status=abc', 'status=999', 'status=-1', 'user_id=1e400', 'user_id=-1', 'key_id=abc', 'sort=__proto__&order=sideways',
  'search=%25%5F%27%22%5C', `search=${'%E6%BC%A2'.repeat(500)}`, 'a=1&a=2&a=3&a=4', '%', '%%%', '&&&==', '=', `x=${'x'.repeat(7_000)}`,
  'model=../../etc/passwd', 'provider=%00', 'from=2025-01-01T00:00:00%2B99:99', 'limit=1&limit=2', '__proto__[polluted]=1', 'after_id=%ff', 'limit=500',
];

const ODD_IDS = ['0', '-1', '999999999', 'abc', '1e308', '1.5', '%00', '..%2f..', '9'.repeat(400), '%ff', 'NaN', '__proto__', '%E6%BC%A2', 'null'];

function query(rng: Rng): string {
  return rng.chance(0.7) ? `?${rng.pick(ABSURD_QUERIES)}` : rng.chance(0.5) ? `?${rng.pick(ABSURD_QUERIES)}&${rng.pick(ABSURD_QUERIES)}` : '';
}

/** Auth headers: [label, headers, is a valid key]. */
function auth(rng: Rng, ids: FuzzIdentities): [string, Headers, boolean] {
  return rng.weighted<[string, Headers, boolean]>([
    [12, ['main key', { authorization: `Bearer ${ids.mainKey}` }, true]],
    [3, ['main key as x-api-key', { 'x-api-key': ids.mainKey }, true]],
    [3, ['tight key', { authorization: `Bearer ${ids.tightKey}` }, true]],
    [1, ['no key', {}, false]],
    [1, ['revoked key', { authorization: `Bearer ${ids.revokedKey}` }, false]],
    [1, ['empty bearer', { authorization: 'Bearer ' }, false]],
    [1, ['Basic', { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` }, false]],
    [1, ['key with a suffix', { authorization: `Bearer ${ids.mainKey}x` }, false]],
    [1, ['key truncated', { authorization: `Bearer ${ids.mainKey.slice(0, -1)}` }, false]],
    [1, ['8 KiB key', { authorization: `Bearer tg_${'A'.repeat(8_000)}` }, false]],
    [1, ['latin-1 key', { authorization: 'Bearer tg_\u00e9\u00ff\u00a0' }, false]],
    [1, ['lowercase bearer', { authorization: `bearer ${ids.mainKey}` }, true]],
    [1, ['two authorization headers', { authorization: [`Bearer ${ids.revokedKey}`, `Bearer ${ids.mainKey}`] }, false]],
    [1, ['bearer + x-api-key disagree', { authorization: 'Bearer tg_wrong', 'x-api-key': ids.mainKey }, false]],
    [1, ['admin session cookie only', { cookie: ids.sessionCookie }, false]],
  ]);
}

function modelCall(rng: Rng, endpoint: ModelEndpoint, fault: boolean): { model: string; stream: boolean; valid: Record<string, unknown> } {
  const model = rng.pick(fault ? endpoint.faultModels : endpoint.healthyModels);
  const stream = endpoint.streams && rng.chance(0.5);
  return { model, stream, valid: validBody(rng, endpoint, model, stream) };
}

const JSON_TYPE = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };

/** The statuses a bad key leaves possible: 401, or a refusal the server gives before authentication. */
const UNAUTHENTICATED = [401] as const;

function grammarCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const { model, stream, valid } = modelCall(rng, endpoint, false);
  const [who, headers, validKey] = auth(rng, ids);
  const mutated: MutatedBody = rng.chance(0.9) ? mutateField(rng, valid) : { bytes: Buffer.from(JSON.stringify(valid)), mutation: 'unchanged' };
  return {
    kind: 'grammar', method: 'POST', url: endpoint.path, headers: { ...JSON_TYPE, ...headers }, body: mutated.bytes, chunked: rng.chance(0.1),
    shape: endpoint.shape, expect: validKey ? null : UNAUTHENTICATED, upstreamFault: false,
    description: `${endpoint.name} ${model}${stream ? ' stream' : ''}, ${who}: ${mutated.mutation}`,
  };
}

function faultCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const { model, stream, valid } = modelCall(rng, endpoint, true);
  return {
    kind: 'upstream-fault', method: 'POST', url: endpoint.path, headers: { ...JSON_TYPE, authorization: `Bearer ${rng.chance(0.9) ? ids.mainKey : ids.tightKey}` },
    body: Buffer.from(JSON.stringify(valid)), chunked: false, shape: endpoint.shape, expect: null, upstreamFault: true,
    description: `${endpoint.name} ${model}${stream ? ' stream' : ''}: upstream fault`,
  };
}

function wholeBodyCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const { model, valid } = modelCall(rng, endpoint, false);
  const mutated = mutateWhole(rng, valid);
  return {
    kind: 'whole-body', method: 'POST', url: endpoint.path, headers: { ...JSON_TYPE, authorization: `Bearer ${ids.mainKey}` }, body: mutated.bytes,
    chunked: rng.chance(0.2), shape: endpoint.shape, expect: mutated.malformed ? [400] : null, upstreamFault: false,
    description: `${endpoint.name} ${model}: ${mutated.mutation}`,
  };
}

function transportCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const { model, valid } = modelCall(rng, endpoint, false);
  const body = Buffer.from(JSON.stringify(valid));
  const [who, authHeaders, validKey] = auth(rng, ids);
  const variant = rng.weighted([[3, 'content-type'], [3, 'method'], [3, 'auth'], [1, 'expect-continue'], [1, 'odd headers']] as const);
  const base = { kind: 'transport', url: endpoint.path, body, chunked: false, shape: endpoint.shape, upstreamFault: false };
  if (variant === 'method') {
    const method = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'HEAD']);
    return { ...base, method, headers: { ...JSON_TYPE, ...authHeaders }, body: method === 'GET' || method === 'HEAD' ? null : body, expect: [404, 405], description: `${method} ${endpoint.path}, ${who}` };
  }
  if (variant === 'content-type') {
    const type = rng.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/xml', '', '*/*', 'application/json, text/plain']);
    return { ...base, method: 'POST', headers: { 'content-type': type, authorization: `Bearer ${ids.mainKey}` }, expect: null, description: `${endpoint.name} ${model}, content-type "${type}"` };
  }
  if (variant === 'expect-continue') {
    return { ...base, method: 'POST', headers: { ...JSON_TYPE, ...authHeaders, expect: '100-continue' }, expect: validKey ? null : UNAUTHENTICATED, description: `${endpoint.name}, Expect: 100-continue, ${who}` };
  }
  if (variant === 'odd headers') {
    const odd: Headers = rng.pick<Headers>([
      { 'x-forwarded-for': '1.2.3.4, 5.6.7.8', 'x-real-ip': '::1' }, { 'anthropic-version': '1999-01-01', 'anthropic-beta': 'x'.repeat(2_000) },
      { 'accept-encoding': 'gzip, br, zstd', accept: 'text/event-stream' }, { 'x-request-id': 'req_\u00ff'.repeat(100) }, { 'content-encoding': 'gzip' },
      { 'transfer-encoding': 'chunked' }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    ]);
    // A transfer-encoding beside the content-length is refused by the HTTP parser (smuggling), before auth.
    const expect = 'transfer-encoding' in odd ? [400] : validKey ? null : UNAUTHENTICATED;
    return { ...base, method: 'POST', headers: { ...JSON_TYPE, ...authHeaders, ...odd }, expect, description: `${endpoint.name}, odd headers ${Object.keys(odd).join('+')}, ${who}` };
  }
  return { ...base, method: 'POST', headers: { ...JSON_TYPE, ...authHeaders }, expect: validKey ? null : UNAUTHENTICATED, description: `${endpoint.name} ${model}, ${who}` };
}

const GET_PATHS = [
  '/api/v1/models', '/api/v1/models/openai%2Fgpt-4o-mini', '/api/v1/models/{id}', '/api/account', '/api/models', '/api/pricing', '/api/providers/openai',
  '/api/providers/{id}', '/api/v1/responses/{id}', '/api/v1/responses/{id}/input_items', '/api/nonexistent', '/api/v1/nope', '/api/v2/chat/completions',
];

function getCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const [who, headers, validKey] = auth(rng, ids);
  const path = rng.pick([...GET_PATHS, '/healthz', '/readyz', '/metrics', '/api/openapi.json', '/nope', '/admin/', '/admin/app/../../etc/passwd', '/%2e%2e/%2e%2e/', '//api//v1//models']).replace('{id}', rng.pick([...ODD_IDS, 'resp_does_not_exist']));
  const method = path.startsWith('/api/v1/responses/') && rng.chance(0.3) ? 'DELETE' : 'GET';
  // The method is checked before the key: DELETE where only GET is routed is 405 whoever asks.
  const refused = method === 'DELETE' ? [401, 405] : UNAUTHENTICATED;
  const known = decodes(path) && GET_PATHS.slice(0, 10).some((p) => p.split('/').length === path.split('/').length && path.startsWith(p.split('{')[0]!.replace(/\/$/, '')));
  return {
    kind: 'get', method, url: path + query(rng), headers, body: null, chunked: false, shape: 'openai',
    expect: known && !validKey && path.startsWith('/api/') ? refused : path === '/healthz' ? [200] : null, upstreamFault: false,
    description: `${method} ${path}, ${who}`,
  };
}

/** `[method, pattern, valid body | null]` of the admin API (docs/admin-api.md). */
function adminRoutes(index: number): Array<[string, string, Record<string, unknown> | null]> {
  return [
    ['GET', '/admin/api/stats', null], ['GET', '/admin/api/logs', null], ['GET', '/admin/api/logs.csv', null], ['GET', '/admin/api/logs/:id', null],
    ['GET', '/admin/api/me', null], ['GET', '/admin/api/users', null], ['GET', '/admin/api/users/:id', null],
    ['POST', '/admin/api/users', { name: `fz-${index}`, email: 'a@b.example', budget_limit_usd: 5, budget_period: 'monthly', rpm: 10, tpm: 1_000, max_concurrent: 2 }],
    ['PATCH', '/admin/api/users/:id', { budget_limit_usd: 10, disabled: false, email: 'x@y.example', budget_period: 'weekly' }],
    ['DELETE', '/admin/api/users/:id', null],
    ['GET', '/admin/api/users/:id/keys', null], ['POST', '/admin/api/users/:id/keys', { name: 'k', expires_at: '2099-01-01T00:00:00Z', rpm: 5, models: ['openai/*'] }],
    ['POST', '/admin/api/keys/:key/revoke', {}], ['POST', '/admin/api/keys/:key/test', { model: 'openai/gpt-4o-mini' }],
    ['GET', '/admin/api/users/:id/credentials', null], ['GET', '/admin/api/users/:id/credentials/:provider', null],
    ['PUT', '/admin/api/users/:id/credentials/:provider', { api_key: 'sk-fuzz-credential' }], ['DELETE', '/admin/api/users/:id/credentials/:provider', null],
    ['GET', '/admin/api/pricing', null], ['POST', '/admin/api/pricing', { model: `fuzz-model-${index}`, provider: 'openai', input_price_per_million: 1, output_price_per_million: 2 }],
    ['PUT', '/admin/api/pricing/:model', { input_price_per_million: 1, output_price_per_million: 2, cached_input_price_per_million: 0.5 }],
    ['DELETE', '/admin/api/pricing/:model', null],
    ['POST', '/admin/api/pricing/import', {}],
    ['POST', '/admin/api/pricing/calculate', { model: 'gpt-4o-mini', input_tokens: 100, output_tokens: 100, cached_input_tokens: 0 }],
    ['POST', '/admin/api/login', { username: 'admin', password: 'not the password' }],
    ['POST', '/admin/api/account/password', { current_password: 'not the password', new_password: 'a long enough new password' }],
    ['POST', '/admin/api/logout', null], ['GET', '/admin/api/nope', null],
  ];
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function adminCase(rng: Rng, ids: FuzzIdentities, index: number): Omit<FuzzCase, 'index'> {
  const [method, pattern, valid] = rng.pick(adminRoutes(index));
  // Logging out with the run's session would end it: logout goes without it.
  const session = pattern !== '/admin/api/logout' && pattern !== '/admin/api/login' && rng.chance(0.75);
  const cookie = session ? ids.sessionCookie : rng.pick(['', 'tollgate_session=forged', `tollgate_session=${'A'.repeat(3_000)}`, 'tollgate_session=; a=b', '=;=;;']);
  const path = pattern
    .replace(':id', rng.chance(0.5) ? String(ids.victimUserId) : rng.pick(ODD_IDS))
    .replace(':key', rng.chance(0.5) ? String(ids.victimKeyId) : rng.pick(ODD_IDS))
    .replace(':provider', rng.pick(['openai', 'nosuch', '__proto__', '%00', 'OPENAI']))
    .replace(':model', rng.pick(['gpt-4o-mini', `fuzz-model-${rng.int(index + 1)}`, 'openai%2Fgpt-4o', '%00', 'x'.repeat(2_000)]));
  const crossSite = method !== 'GET' && rng.chance(0.1);
  const headers: Headers = { 'content-type': rng.chance(0.9) ? 'application/json' : 'text/plain', ...(cookie ? { cookie } : {}), ...(crossSite ? { origin: 'https://evil.example' } : {}) };
  let body: MutatedBody | null = null;
  if (valid) body = rng.chance(0.8) ? mutateField(rng, { ...valid, x: 1 }) : rng.chance(0.5) ? mutateWhole(rng, valid) : { bytes: Buffer.from(JSON.stringify(valid)), mutation: 'unchanged' };
  // A path parameter that does not URL-decode (`%ff`) matches no route: 404 before the session check.
  const known = !pattern.endsWith('/nope') && decodes(path);
  const expect = known && crossSite ? [403] : known && !session && pattern !== '/admin/api/login' ? [401] : null;
  return {
    kind: 'admin', method, url: path + (method === 'GET' ? query(rng) : ''), headers, body: body?.bytes ?? null, chunked: false, shape: 'openai',
    expect, upstreamFault: false, description: `${method} ${path}, ${session ? 'session' : `cookie "${cookie.slice(0, 30)}"`}${crossSite ? ', cross-site' : ''}${body ? `: ${body.mutation}` : ''}`,
  };
}

function oversizedCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const validKey = rng.chance(0.7);
  const size = MAX_BODY_BYTES + 1 + rng.int(MAX_BODY_BYTES);
  const body = Buffer.from(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"${'a'.repeat(size)}"}]}`);
  const chunked = rng.chance(0.5);
  return {
    kind: 'oversized', method: 'POST', url: endpoint.path, headers: { ...JSON_TYPE, ...(validKey ? { authorization: `Bearer ${ids.mainKey}` } : {}) }, body, chunked,
    shape: endpoint.shape, expect: validKey ? [413] : UNAUTHENTICATED, upstreamFault: false,
    description: `${endpoint.name}: ${body.length}-byte body${chunked ? ' (chunked)' : ''}, ${validKey ? 'main key' : 'no key'}`,
  };
}

function headerFloodCase(rng: Rng, ids: FuzzIdentities): Omit<FuzzCase, 'index'> {
  const endpoint = rng.pick(MODEL_ENDPOINTS);
  const { valid } = modelCall(rng, endpoint, false);
  const count = rng.pick([50, 90, 200, 1_000]);
  const headers: Headers = { ...JSON_TYPE, authorization: `Bearer ${ids.mainKey}` };
  for (let i = 0; i < count; i++) headers[`x-fuzz-${i}`] = 'v'.repeat(100);
  return {
    kind: 'header-flood', method: 'POST', url: endpoint.path, headers, body: Buffer.from(JSON.stringify(valid)), chunked: false, shape: endpoint.shape,
    expect: count * 112 > 16 * 1024 ? [431] : null, upstreamFault: false, description: `${endpoint.name}: ${count} extra headers of 100 bytes`,
  };
}

/** Case `index` of the run seeded `seed`. */
export function fuzzCase(seed: number, index: number, ids: FuzzIdentities): FuzzCase {
  const rng = rngFor(seed, index);
  const make = rng.weighted([
    [38, grammarCase], [10, faultCase], [12, wholeBodyCase], [10, transportCase], [12, getCase], [15, adminCase], [1.5, oversizedCase], [1.5, headerFloodCase],
    [5, responsesStateCase], [3, keyPoolCase], [0.6, halfOpenCase],
  ] as const);
  return { index, ...make(rng, ids, index) };
}
