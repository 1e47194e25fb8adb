/**
 * The API key test (`POST /admin/api/keys/:id/test`, `docs/admin-api.md` "API keys"): a real request
 * through the gateway's own HTTP server and whole pipeline as that key, `GET /api/account`, and with a
 * model a one-token chat completion. Only the key's SHA-256 is stored, so auth-guard issues a
 * single-use ticket that stands for the key for one request (the `authGuard` service, `services.ts`); the
 * ticket is presented as the bearer token and authenticates exactly as the key would.
 */
import { performance } from 'node:perf_hooks';
import type { AdminContext } from './context.ts';
import { resourceNotFound } from '../errors.ts';

/** An error as the test reports it: the gateway's error body without `param`. */
export interface KeyTestError {
  message: string;
  type: string;
  code: string;
}

export interface KeyTestCompletion {
  model: string;
  /** HTTP status of the chat completion; null when the gateway did not answer. */
  status: number | null;
  latency_ms: number;
  error: KeyTestError | null;
}

export interface KeyTestReport {
  /** The account call answered 200 and, when a model was given, so did the completion. */
  ok: boolean;
  key_id: number;
  /** HTTP status of `GET /api/account`; null when the gateway did not answer. */
  status: number | null;
  /** The key was accepted (any answer but 401; a disabled user's 403 is authenticated but denied). */
  authenticated: boolean;
  latency_ms: number;
  error: KeyTestError | null;
  /** `budget` of `GET /api/account`, null on failure. */
  budget: unknown;
  /** `rate_limits` of `GET /api/account`, null on failure. */
  rate_limits: unknown;
  completion: KeyTestCompletion | null;
}

const ACCOUNT_TIMEOUT_MS = 10_000;
/** A one-token completion is fast, but a cold upstream may take a while to answer at all. */
const COMPLETION_TIMEOUT_MS = 60_000;

interface SelfCall {
  status: number | null;
  latencyMs: number;
  body: Record<string, unknown> | null;
  error: KeyTestError | null;
}

function errorOf(status: number, body: Record<string, unknown> | null): KeyTestError | null {
  if (status < 400) return null;
  const error = body?.error as Partial<KeyTestError> | undefined;
  if (error && typeof error.message === 'string') {
    return { message: error.message, type: String(error.type ?? 'server_error'), code: String(error.code ?? 'unknown') };
  }
  return { message: `The gateway answered ${status} without an error body.`, type: 'server_error', code: 'unexpected_response' };
}

async function callSelf(ctx: AdminContext, ticket: string, path: string, body: unknown, timeoutMs: number): Promise<SelfCall> {
  const startedMs = performance.now();
  const elapsed = () => Math.round(performance.now() - startedMs);
  try {
    const res = await fetch(ctx.selfOrigin() + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${ticket}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const latencyMs = elapsed();
    let parsed: Record<string, unknown> | null = null;
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      // Not JSON: reported through errorOf when the status is an error.
    }
    return { status: res.status, latencyMs, body: parsed, error: errorOf(res.status, parsed) };
  } catch (err) {
    return {
      status: null,
      latencyMs: elapsed(),
      body: null,
      error: { message: `The gateway did not answer its own request: ${(err as Error).message}`, type: 'server_error', code: 'self_request_failed' },
    };
  }
}

const keyNotFound = () => resourceNotFound('key_not_found', 'No API key has this id.', 'id');

/**
 * Runs the test for key `keyId` and reports. Throws 404 `key_not_found` for an unknown key. A key
 * that is refused (revoked, expired, disabled user) is a result, not an error: `ok` is false.
 */
export async function testApiKey(ctx: AdminContext, keyId: number, model: string | null): Promise<KeyTestReport> {
  const authGuard = ctx.services.get('authGuard');
  if (!authGuard) {
    const error = { message: 'auth-guard is not in the manifest, so no request is authenticated by key: there is nothing to test.', type: 'server_error', code: 'auth_guard_missing' };
    return { ok: false, key_id: keyId, status: null, authenticated: false, latency_ms: 0, error, budget: null, rate_limits: null, completion: null };
  }
  const ticket = await authGuard.issueTestTicket(keyId);
  if (ticket === null) throw keyNotFound();
  const account = await callSelf(ctx, ticket, '/api/account', undefined, ACCOUNT_TIMEOUT_MS);

  let completion: KeyTestCompletion | null = null;
  if (model !== null) {
    const second = await authGuard.issueTestTicket(keyId);
    if (second === null) throw keyNotFound();
    const body = { model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] };
    const call = await callSelf(ctx, second, '/api/v1/chat/completions', body, COMPLETION_TIMEOUT_MS);
    completion = { model, status: call.status, latency_ms: call.latencyMs, error: call.error };
  }

  const answered = account.status === 200 && account.body !== null;
  return {
    ok: account.status === 200 && (completion === null || completion.status === 200),
    key_id: keyId,
    status: account.status,
    authenticated: account.status !== null && account.status !== 401,
    latency_ms: account.latencyMs,
    error: account.error,
    budget: answered ? (account.body!.budget ?? null) : null,
    rate_limits: answered ? (account.body!.rate_limits ?? null) : null,
    completion,
  };
}
