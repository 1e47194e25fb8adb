/**
 * The exchange the server builds for every request (`core/server.ts`): `Exchange` as a class.
 *
 * Why a class and not an object literal: `signal` is a getter (its `AbortSignal` is made on first use,
 * `exchange-abort.ts`). A getter written in an object literal is a new closure for every object, and
 * V8 keeps accessors in the hidden class, so every exchange got a hidden class of its own. Those maps
 * live in the old generation and point at the request's young objects, so each scavenge promoted what
 * the request had allocated (7.3 KiB a request, measured with `--trace-gc-nvp` under 50 connections;
 * 1.7 KiB with the class), the old generation grew by that much per request until a full GC, and
 * every `ex.…` access in the pipeline met a new map (megamorphic inline caches). A class keeps the
 * getter on its prototype: one hidden class for all exchanges. Measured with the gateway alone on a
 * core under 50 connections: 185 against 248–260 µs of CPU per non-streamed request, GC pauses 7
 * against 16–20 µs a request, peak RSS ~45 MB lower.
 *
 * The same V8 (Node 20's 11.3; Node 22+ is not affected) gives an object literal that starts with a
 * spread and goes on with more properties (`{ ...a, b: 1 }`, or `{ ...a, ...c }`) a new hidden class
 * every time it runs, with the same costs: a map per object in the old generation and inline-cache
 * misses wherever the objects go. So per-request code writes `Object.assign({}, a, { b: 1 })`
 * (same result, reuses the transitions; ~10x cheaper there) or names the fields; `npm run lint`
 * refuses such a literal in the request path's files (`no-restricted-syntax` in eslint.config.js).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Exchange, Operation, Principal, RequestCost, Target, UpstreamAttempt } from '../exchange.ts';
import type { ExchangeAbort } from './exchange-abort.ts';
import type { ChatCompletion, TokenCounts, Usage } from '../canonical/chat-types.ts';
import type { CanonicalRequest } from '../canonical/canonical-request.ts';
import type { Dialect } from '../dialects/dialect.ts';
import type { GatewayError } from '../errors.ts';

/** What the server knows of a request when it starts its exchange (the fields `Exchange` documents). */
export type ExchangeStart = Pick<Exchange,
  'id' | 'operation' | 'method' | 'path' | 'headers' | 'params' | 'query' | 'startedAtMs' | 'startedAtPerfMs' | 'dialect' | 'refusal'
> & { cancellation: ExchangeAbort };

export class LiveExchange implements Exchange {
  readonly id: string;
  readonly operation: Operation;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly startedAtMs: number;
  readonly startedAtPerfMs: number;
  readonly cancellation: ExchangeAbort;
  readonly dialect: Dialect | null;
  readonly refusal: GatewayError | null;
  request: CanonicalRequest | null = null;
  clientBody: Readonly<Record<string, unknown>> | null = null;
  untranslatable: GatewayError | null = null;
  ownCredentialOnly: GatewayError | null = null;
  stream = false;
  clientWantsUsage = false;
  principal: Principal | null = null;
  target: Target | null = null;
  modelServed: string | null = null;
  usage: TokenCounts | null = null;
  usageEstimated = false;
  usageReport: Usage | null = null;
  promptTokensEstimate: number | null = null;
  readonly generated: string[] = [];
  attempts: UpstreamAttempt[] = [];
  upstreamStatus: number | null = null;
  cost: RequestCost | null = null;
  status = 0;
  errorCode: string | null = null;
  answer: ChatCompletion | null = null;
  errorPlugin: string | null = null;
  logFields: Record<string, string | number | boolean | null> | null = null;
  firstByteAtPerfMs: number | null = null;
  clientAborted = false;
  readonly responseHeaders: Record<string, string> = {};
  readonly states: unknown[] = [];

  constructor(start: ExchangeStart) {
    this.id = start.id;
    this.operation = start.operation;
    this.method = start.method;
    this.path = start.path;
    this.headers = start.headers;
    this.params = start.params;
    this.query = start.query;
    this.startedAtMs = start.startedAtMs;
    this.startedAtPerfMs = start.startedAtPerfMs;
    this.cancellation = start.cancellation;
    this.dialect = start.dialect;
    this.refusal = start.refusal;
  }

  /** An `AbortSignal` of the cancellation, made on first use. */
  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}
