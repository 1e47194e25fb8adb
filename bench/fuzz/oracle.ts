/**
 * The fuzzer's oracle: what the contract (docs/contract.md, "Errors"; docs/admin-api.md)
 * allows as the answer to one case, checked on its outcome. A finding is one broken rule:
 * - `5xx`: a 500 from the gateway (`internal_error`) anywhere, or any 5xx but the upstream statuses
 *   (502, 503, 504, 529, and an upstream's own 500 relayed on native pass-through) after an upstream fault;
 * - `status`: a status other than the one the contract gives the case (`FuzzCase.expect`);
 * - `body`: an error answer whose body is not the endpoint's shape (OpenAI
 *   `{"error":{"message","type","code","param"}}`; Anthropic `{"type":"error","error":{"type","message"}}`
 *   on /v1/messages), or a 2xx JSON answer that does not parse;
 * - `stream`: an event stream that does not end with its dialect's last event ([DONE], message_stop,
 *   response.completed / incomplete / failed) or one error event;
 * - `hang`: no whole answer within the bound; `reset`: the connection cut with no answer, where the
 *   gateway had no reason to close it early;
 * - `leak`: an upstream credential of the manifest in the answer, or text the case forbids (another
 *   user's stored items);
 * - `body` also: an error answer that breaks its case's `errors` rule for its status (its code, what
 *   its message says: a 403 the request caused never blames the gateway's key);
 * - `half-open` (judgeHalfOpen): a raw connection left open past its deadline by the gateway, an
 *   answer other than the case's (408) or not in its shape, or `/healthz` unanswered meanwhile;
 * - `world` (run-fuzz.ts, after the run): the world's own checks (fuzz-world.ts: the shared key
 *   pool, its breaker, what reached the upstreams).
 */
import type { FuzzCase } from './cases.ts';
import type { HalfOpenOutcome, Outcome } from './send.ts';

export type FindingKind = 'crash' | 'health' | '5xx' | 'status' | 'body' | 'stream' | 'hang' | 'reset' | 'leak' | 'half-open' | 'world';

export interface Finding {
  kind: FindingKind;
  index: number;
  detail: string;
}

/** Upstream credentials of the fuzz manifest (fuzz-world.ts): none may ever reach a client. */
export const UPSTREAM_SECRETS = ['sk-fuzz-openai', 'sk-fuzz-responses', 'sk-ant-fuzz', 'sk-fuzz-hostile', 'sk-fuzz-pool'];

const UPSTREAM_STATUSES = new Set([502, 503, 504, 529]);

type JsonObject = Record<string, unknown>;

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringOrNull = (v: unknown) => typeof v === 'string' || v === null;

/** Why `json` is not an error body of `shape`, or null when it is. */
export function errorShapeProblem(json: unknown, shape: 'openai' | 'anthropic'): string | null {
  if (!isObject(json) || !isObject(json.error)) return 'no "error" object';
  const error = json.error;
  if (typeof error.message !== 'string' || typeof error.type !== 'string') return 'error.message or error.type is not a string';
  if (shape === 'anthropic') return json.type === 'error' ? null : 'top-level "type" is not "error"';
  if (!('code' in error) || !stringOrNull(error.code) || !('param' in error) || !stringOrNull(error.param)) return 'error.code or error.param missing or not a string/null';
  return null;
}

/** The data of every SSE event in `text`: `[event name or null, data]`. */
function sseEvents(text: string): Array<[string | null, string]> {
  const events: Array<[string | null, string]> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let name: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) events.push([name, data.join('\n')]);
  }
  return events;
}

/** Why a stream answer to `c` did not end properly, or null. */
function streamProblem(c: FuzzCase, text: string): string | null {
  const events = sseEvents(text);
  const last = events.at(-1);
  if (!last) return 'no event at all';
  const data = parse(last[1]);
  const type = isObject(data) ? data.type : undefined;
  const path = c.url.split('?')[0]!;
  if (path.startsWith('/api/v1/messages')) return type === 'message_stop' || type === 'error' ? null : `last event is ${String(type ?? last[1].slice(0, 60))}`;
  if (path.startsWith('/api/v1/responses')) {
    return ['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(String(type)) ? null : `last event is ${String(type ?? last[1].slice(0, 60))}`;
  }
  if (last[1] === '[DONE]' || (isObject(data) && isObject(data.error))) return null;
  return `last event is ${last[1].slice(0, 80)}`;
}

function isGatewayInternal(json: unknown): boolean {
  return isObject(json) && isObject(json.error) && json.error.code === 'internal_error';
}

/** Every rule `outcome` breaks as the answer to `c`. */
export function judge(c: FuzzCase, outcome: Outcome, secrets: readonly string[] = UPSTREAM_SECRETS): Finding[] {
  const findings: Finding[] = [];
  const add = (kind: FindingKind, detail: string) => findings.push({ kind, index: c.index, detail });
  if (outcome.failure === 'timeout') {
    add('hang', `no whole answer within the bound (status ${outcome.status || 'none'})`);
    return findings;
  }
  if (outcome.status === -1) return findings;
  const text = outcome.body.toString('utf8');
  for (const secret of secrets) if (text.includes(secret)) add('leak', `the answer contains the upstream credential ${secret}`);
  for (const text_ of c.forbidden ?? []) if (text.includes(text_)) add('leak', `the answer contains ${JSON.stringify(text_)}, which only another user's stored items hold`);
  if (outcome.status === 0) {
    // Closing a connection whose body was left unread is the gateway's right (auth before body, 413).
    const mayClose = c.kind === 'oversized' || c.kind === 'header-flood' || c.expect?.includes(401);
    if (!mayClose) add('reset', `no answer: ${outcome.failure}`);
    return findings;
  }
  const { status } = outcome;
  const json = parse(text);
  if (status >= 500) {
    const relayedUpstream500 = status === 500 && c.upstreamFault && !isGatewayInternal(json);
    if (isGatewayInternal(json) || !(c.upstreamFault && (UPSTREAM_STATUSES.has(status) || relayedUpstream500))) add('5xx', `${status}: ${text.slice(0, 200)}`);
  }
  if (c.expect && !c.expect.includes(status)) add('status', `${status}, the contract gives ${c.expect.join(' or ')}: ${text.slice(0, 200)}`);
  const type = String(outcome.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    const problem = streamProblem(c, text);
    if (problem) add('stream', `${problem}${outcome.failure ? ` (${outcome.failure})` : ''}`);
    return findings;
  }
  if (outcome.failure) add('reset', `the answer was cut: ${outcome.failure}`);
  if (status >= 400 && c.method !== 'HEAD') {
    const problem = errorShapeProblem(json, c.shape);
    if (problem) add('body', `${status} ${c.shape} error body: ${problem}: ${JSON.stringify(text.slice(0, 200))}`);
    else {
      const rule = expectedErrorProblem(c, status, json);
      if (rule) add('body', `${status}: ${rule}: ${JSON.stringify(text.slice(0, 200))}`);
    }
  } else if (status >= 200 && status < 300 && type.startsWith('application/json') && json === undefined && c.method !== 'HEAD') {
    add('body', `${status} JSON answer does not parse: ${JSON.stringify(text.slice(0, 120))}`);
  }
  return findings;
}

/** Why the error body `json` (already in its shape) breaks the case's rule for `status`, or null. */
function expectedErrorProblem(c: FuzzCase, status: number, json: unknown): string | null {
  const rule = c.errors?.find((e) => e.status === status);
  if (!rule || !isObject(json) || !isObject(json.error)) return null;
  const { code, message } = json.error;
  if (rule.code !== undefined && code !== rule.code) return `error.code is ${JSON.stringify(code)}, not ${rule.code}`;
  if (rule.says !== undefined && !String(message).includes(rule.says)) return `the message does not say "${rule.says}"`;
  if (rule.never !== undefined && String(message).toLowerCase().includes(rule.never)) return `the message says "${rule.never}"`;
  return null;
}

/** Every rule the half-open connection's `outcome` breaks (see the module doc). */
export function judgeHalfOpen(c: FuzzCase, outcome: HalfOpenOutcome): Finding[] {
  const findings: Finding[] = [];
  const add = (detail: string) => findings.push({ kind: 'half-open', index: c.index, detail });
  if (!outcome.closed) add(`the gateway kept the connection open ${c.halfOpen!.deadlineMs} ms (its timeout and close grace are far shorter)`);
  if (outcome.healthzStatus !== 200) add(`GET /healthz answered ${outcome.healthzStatus || 'nothing'} while the connection was open`);
  const text = outcome.received.toString('latin1');
  if (text === '') return findings; // closed without an answer: allowed
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
  if (c.expect && !c.expect.includes(status)) add(`answered ${status || JSON.stringify(text.slice(0, 60))}, the contract gives ${c.expect.join(' or ')}`);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  // A head that never completed has no path yet: Node hands the clientError handler no raw head on
  // a timeout (and on a parse error only the last bytes read), so that 408 / 400 cannot tell
  // /api/v1/messages from the rest and is in OpenAI's shape. (A body that stopped coming after a
  // parsed head is answered in its path's dialect: core/http/client-errors.ts.) Such an answer is
  // held to one of the two shapes.
  const json = parse(Buffer.from(body, 'latin1').toString('utf8'));
  const shapeProblem = errorShapeProblem(json, c.shape);
  const problem = status < 400 ? null : (status === 408 || status === 400) && shapeProblem && errorShapeProblem(json, 'openai') === null ? null : shapeProblem;
  if (problem) add(`${status} ${c.shape} error body: ${problem}: ${JSON.stringify(body.slice(0, 200))}`);
  return findings;
}
