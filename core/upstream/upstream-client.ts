/**
 * Upstream dispatch over undici: one keep-alive pool per origin (an `Agent`), connect / headers / body
 * timeouts, the pool's queue timeout and a non-streamed call's deadline, abort on the exchange's
 * signal, and transport failures mapped to the contract's errors (timeout → 504 `upstream_timeout`,
 * refused/reset → 502 `upstream_error`).
 */
import { Agent } from 'undici';
import type { AbortSource } from '../http/exchange-abort.ts';
import type { UpstreamRequest } from './upstream-call.ts';
import { GatewayError, upstreamError, upstreamTimeout } from '../errors.ts';
import { upstreamBusy, deadlineReason } from './upstream-queue.ts';
import { DeadlineList } from './deadline-list.ts';
import { responseTooLarge, UpstreamCallHandler, type CallScope, type UpstreamBody } from './upstream-dispatch.ts';

export type { UpstreamBody } from './upstream-dispatch.ts';

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body: iterate it to consume with backpressure, or read it whole with `text(maxBytes)`. */
  body: UpstreamBody;
}

export interface UpstreamClient {
  /** Sends `call`; resolves once the upstream's status and headers arrived. Throws `GatewayError`. */
  send(call: UpstreamRequest, signal?: AbortSource): Promise<UpstreamResponse>;
  /** GET a JSON document (model lists). Throws `GatewayError` for transport errors and non-2xx. */
  getJson(provider: string, url: string, headers: Record<string, string>, signal?: AbortSource): Promise<unknown>;
  close(): Promise<void>;
}

/** The manifest's `upstream` section: timeouts, pool size and caps of every upstream call. */
export interface UpstreamSettings {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxResponseBytes: number;
  connectionsPerOrigin: number;
  /** Longest wait for a connection of a full pool (503 `upstream_busy`); 0 = none. Default 30,000. */
  queueTimeoutMs?: number;
  /** Most bytes relayed from one upstream stream. Default 64 MiB. */
  maxStreamBytes?: number;
  /** Longest a non-streamed call may take in all (headers and body); 0 = none. Default 300,000. */
  requestDeadlineMs?: number;
}

/** `UpstreamSettings.requestDeadlineMs` when absent: 5 minutes, for reasoning models' long non-streamed answers. */
export const DEFAULT_REQUEST_DEADLINE_MS = 300_000;

/** `UpstreamSettings.queueTimeoutMs` when absent: 30 s waiting for a pool connection, then 503 `upstream_busy`. */
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000;

/**
 * Creates the gateway's upstream client. Timeouts in ms; 0 disables a timeout. Each call is one
 * dispatch handler (`upstream-dispatch.ts`) on an undici `Agent` (one keep-alive pool per origin);
 * the queue timeout and the deadline of every call share two timers (`deadline-list.ts`).
 */
export function createUpstreamClient(settings: Readonly<UpstreamSettings>): UpstreamClient {
  const agent = new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    connections: settings.connectionsPerOrigin,
    keepAliveTimeout: 30_000,
    headersTimeout: settings.headersTimeoutMs,
    bodyTimeout: settings.bodyTimeoutMs,
  });

  const queueTimeoutMs = settings.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;
  const deadlineMs = settings.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
  const scopes = new Map<string, CallScope>();
  // A non-streamed answer arrives whole or not at all, so it gets one deadline for headers and body;
  // a stream's silence is bounded by bodyTimeoutMs instead (it may legitimately last long).
  const deadline = deadlineMs > 0 ? new DeadlineList<UpstreamCallHandler>(deadlineMs, (call) => call.abort(deadlineReason(deadlineMs))) : null;
  const scopeOf = (provider: string): CallScope => {
    let scope = scopes.get(provider);
    if (!scope) {
      const queue = queueTimeoutMs > 0
        ? new DeadlineList<UpstreamCallHandler>(queueTimeoutMs, (call) => call.abort(upstreamBusy(provider, queueTimeoutMs)))
        : null;
      scope = { provider, queue, deadline, mapError: transportError };
      scopes.set(provider, scope);
    }
    return scope;
  };

  function send(call: UpstreamRequest, signal?: AbortSource): Promise<UpstreamResponse> {
    if (signal?.aborted) return Promise.reject(transportError(call.provider, signal.reason));
    if (!call.authorize) return dispatch(call, call.headers, signal);
    return call.authorize(call).then(
      (added) => (signal?.aborted ? Promise.reject(transportError(call.provider, signal.reason)) : dispatch(call, Object.assign({}, call.headers, added), signal)),
      (err: unknown) => Promise.reject(transportError(call.provider, err)),
    );
  }

  function dispatch(call: UpstreamRequest, headers: Record<string, string>, signal?: AbortSource): Promise<UpstreamResponse> {
    const stream = (call as { stream?: boolean }).stream === true;
    return new Promise((resolve, reject) => {
      const handler = new UpstreamCallHandler(scopeOf(call.provider), signal, !stream, resolve, reject);
      agent.dispatch({
        origin: call.origin,
        path: call.path,
        method: call.method,
        headers,
        body: call.body,
        headersTimeout: settings.headersTimeoutMs,
        bodyTimeout: settings.bodyTimeoutMs,
      }, handler);
    });
  }

  async function getJson(provider: string, url: string, headers: Record<string, string>, signal?: AbortSource): Promise<unknown> {
    const { origin, pathname, search } = new URL(url);
    const res = await send({ provider, origin, path: pathname + search, method: 'GET', headers, body: null }, signal);
    const text = await res.body.text(settings.maxResponseBytes);
    if (res.statusCode < 200 || res.statusCode > 299) {
      throw upstreamError({
        status: res.statusCode >= 500 ? 502 : res.statusCode,
        message: `Upstream "${provider}" answered ${res.statusCode} to GET ${pathname}.`,
      });
    }
    try {
      return JSON.parse(text);
    } catch (err) {
      throw upstreamError({ status: 502, message: `Upstream "${provider}" sent a model list that is not JSON.`, cause: err });
    }
  }

  return { send, getJson, close: () => agent.close() };
}

/**
 * Reads a whole (bounded) body as UTF-8. Throws 502 `upstream_response_too_large` when it exceeds
 * `maxBytes` (the call is aborted then), else the read's transport error. Takes an upstream answer's
 * body or any async iterable of buffers (tests, hand-built calls).
 */
export function readBodyText(body: UpstreamBody | AsyncIterable<Buffer>, maxBytes: number, provider: string): Promise<string> {
  if (typeof (body as UpstreamBody).text === 'function') return (body as UpstreamBody).text(maxBytes);
  return readIterable(body, maxBytes, provider);
}

async function readIterable(body: AsyncIterable<Buffer>, maxBytes: number, provider: string): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of body) {
      size += part.length;
      if (size > maxBytes) throw responseTooLarge(provider, maxBytes);
      parts.push(part);
    }
  } catch (err) {
    throw transportError(provider, err);
  }
  return parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8');
}

/** Maps an undici / socket failure to the contract's error. GatewayErrors pass through. */
export function transportError(provider: string, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // The deadline of a non-streamed call (AbortSignal.timeout): undici fails with the signal's reason.
  if ((err as { name?: string } | null)?.name === 'TimeoutError') return upstreamTimeout(provider, 'deadline', err);
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return upstreamTimeout(provider, 'connect', err);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return upstreamTimeout(provider, 'headers', err);
    case 'UND_ERR_BODY_TIMEOUT':
      return upstreamTimeout(provider, 'body', err);
    default:
      return upstreamError({
        status: 502,
        code: 'upstream_unreachable',
        message: `Could not complete the call to upstream "${provider}" (${code ?? 'connection error'}). Try again; if it persists the provider may be down.`,
        cause: err,
      });
  }
}
