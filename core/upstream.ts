/**
 * Upstream dispatch over undici: one keep-alive pool per origin (an `Agent`), connect / headers / body
 * timeouts, abort on the exchange's signal, and transport failures mapped to the contract's errors
 * (timeout → 504 `upstream_timeout`, refused/reset → 502 `upstream_error`).
 */
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { UpstreamSettings } from './plugin.ts';
import type { UpstreamRequest } from './upstream-call.ts';
import { GatewayError, gatewayError, upstreamError, upstreamTimeout } from './errors.ts';
import { guardCall, raceQueue, reportDispatch } from './upstream-queue.ts';

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as a Node Readable: iterate it to consume with backpressure. */
  body: Dispatcher.ResponseData['body'];
}

export interface UpstreamClient {
  /** Sends `call`; resolves once the upstream's status and headers arrived. Throws `GatewayError`. */
  send(call: UpstreamRequest, signal?: AbortSignal): Promise<UpstreamResponse>;
  /** GET a JSON document (model lists). Throws `GatewayError` for transport errors and non-2xx. */
  getJson(provider: string, url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

/** `UpstreamSettings.requestDeadlineMs` when absent: 5 minutes, for reasoning models' long non-streamed answers. */
export const DEFAULT_REQUEST_DEADLINE_MS = 300_000;

/** `UpstreamSettings.queueTimeoutMs` when absent: 30 s waiting for a pool connection, then 503 `upstream_busy`. */
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000;

/** Creates the gateway's upstream client. Timeouts in ms; 0 disables a timeout. */
export function createUpstreamClient(settings: Readonly<UpstreamSettings>): UpstreamClient {
  const agent = new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    connections: settings.connectionsPerOrigin,
    keepAliveTimeout: 30_000,
    headersTimeout: settings.headersTimeoutMs,
    bodyTimeout: settings.bodyTimeoutMs,
  }).compose(reportDispatch);

  const queueTimeoutMs = settings.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;
  const deadlineMs = settings.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;

  async function send(call: UpstreamRequest, signal?: AbortSignal): Promise<UpstreamResponse> {
    // A non-streamed answer arrives whole or not at all, so it gets one deadline for headers and
    // body; a stream's silence is bounded by bodyTimeoutMs instead (it may legitimately last long).
    const stream = (call as { stream?: boolean }).stream === true;
    const guard = guardCall(call.provider, queueTimeoutMs, stream ? 0 : deadlineMs, signal);
    try {
      const res = await raceQueue(agent.request({
        ...guard.options,
        origin: call.origin,
        path: call.path,
        method: call.method,
        headers: call.headers,
        body: call.body,
        signal: guard.signal,
        headersTimeout: settings.headersTimeoutMs,
        bodyTimeout: settings.bodyTimeoutMs,
      }), guard.signal);
      // The deadline covers the body too: the guard ends when the body has been read or dropped.
      res.body.once('close', guard.done);
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      guard.done();
      throw transportError(call.provider, err);
    }
  }

  async function getJson(provider: string, url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
    const { origin, pathname, search } = new URL(url);
    const res = await send({ provider, origin, path: pathname + search, method: 'GET', headers, body: null }, signal);
    const text = await readBodyText(res.body, settings.maxResponseBytes, provider);
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
 * `maxBytes` (the body is destroyed then). Listens for `data` rather than iterating: an async iterator
 * per answer costs more than the rest of reading a small one.
 */
export function readBodyText(body: AsyncIterable<Buffer> | NodeJS.ReadableStream, maxBytes: number, provider: string): Promise<string> {
  if (!isEmitter(body)) return readIterable(body, maxBytes, provider);
  const stream = body;
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (part: Buffer) => {
      size += part.length;
      if (size > maxBytes) {
        cleanup();
        (stream as { destroy?: () => void }).destroy?.();
        reject(tooLarge(provider, maxBytes));
        return;
      }
      parts.push(part);
    };
    const onEnd = () => {
      cleanup();
      resolve(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8'));
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(transportError(provider, err));
    };
    // A body destroyed before its end (an abort) emits 'close' without 'end' or 'error'.
    const onClose = () => onError(Object.assign(new Error('The upstream body closed before its end.'), { code: 'UND_ERR_ABORTED' }));
    function cleanup(): void {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
    }
    // Stays after cleanup: a body destroyed here (too large) still emits its abort error later, and an
    // 'error' without a listener would crash the process.
    stream.on('error', ignoreLateError);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

function ignoreLateError(): void {}

function isEmitter(body: unknown): body is NodeJS.ReadableStream {
  return typeof (body as { on?: unknown }).on === 'function';
}

function tooLarge(provider: string, maxBytes: number): GatewayError {
  return gatewayError('upstream_response_too_large', {
    message: `Upstream "${provider}" sent a response larger than ${maxBytes} bytes (upstream.maxResponseBytes); it was not relayed.`,
  });
}

async function readIterable(body: AsyncIterable<Buffer>, maxBytes: number, provider: string): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of body) {
      size += part.length;
      if (size > maxBytes) throw tooLarge(provider, maxBytes);
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
