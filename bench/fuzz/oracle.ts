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
 * - `leak`: an upstream credential of the manifest in the answer.
 */
import type { FuzzCase } from './cases.ts';
import type { Outcome } from './send.ts';

export type FindingKind = 'crash' | 'health' | '5xx' | 'status' | 'body' | 'stream' | 'hang' | 'reset' | 'leak';

export interface Finding {
  kind: FindingKind;
  index: number;
  detail: string;
}

/** Upstream credentials of the fuzz manifest (fuzz-world.ts): none may ever reach a client. */
export const UPSTREAM_SECRETS = ['sk-fuzz-openai', 'sk-fuzz-responses', 'sk-ant-fuzz', 'sk-fuzz-hostile'];

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
  } else if (status >= 200 && status < 300 && type.startsWith('application/json') && json === undefined && c.method !== 'HEAD') {
    add('body', `${status} JSON answer does not parse: ${JSON.stringify(text.slice(0, 120))}`);
  }
  return findings;
}
