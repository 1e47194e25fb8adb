/**
 * The HTTP front: node:http, one `Exchange` per pipeline request, routing by method and path, and
 * graceful shutdown (stop accepting, let in-flight requests and streams finish within
 * `drainTimeoutMs`, then cut the rest). Every response carries `x-request-id`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomFillSync } from 'node:crypto';
import type { Exchange } from './exchange.ts';
import { ExchangeAbort } from './http/exchange-abort.ts';
import { RunningExchanges } from './http/running-exchanges.ts';
import { LiveExchange } from './http/live-exchange.ts';
import type { Pipeline } from './pipeline.ts';
import type { Log } from './runtime/log.ts';
import { GatewayError, endpointNotFound, gatewayShutdown, methodNotAllowed, routeNotFound, shuttingDown, toGatewayError } from './errors.ts';
import { sendError, sendJson } from './http/respond.ts';
import { createBodyBytesInFlight, parseJsonBodyOffThread, readRequestBody, type BodyBytesInFlight } from './http/request-body.ts';
import { systemClock, type Clock } from './runtime/clock.ts';
import { createRouteTable, UNKNOWN_ENDPOINT, type RouteDeclaration, type RouteTable } from './routes.ts';
import { dialects, openAIErrorBody, type Dialect } from './dialects/index.ts';
import { guessBaseUrlMistake } from './dialects/base-url-hint.ts';
import type { PluginFactory } from './plugin.ts';
import type { Cors } from './http/cors.ts';
import { limitConnections } from './http/connection-limits.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { stopPretenuring } from './runtime/v8-pretenuring.ts';
import { releaseStartUpMemoryWhenIdle } from './runtime/start-up-memory.ts';

/** A pipeline route: a declaration and the dialect that parses its body (null for plugin endpoints). */
export interface PipelineRoute extends RouteDeclaration {
  dialect: Dialect | null;
}

export interface GatewayServerOptions {
  pipeline: Pipeline;
  log: Log;
  /** Every pipeline endpoint: the dialects' and the listed plugins' declarations. */
  routes: readonly PipelineRoute[];
  maxBodyBytes: number;
  /** Body limits per dialect id, over `maxBodyBytes`. */
  maxBodyBytesByDialect?: Readonly<Record<string, number>>;
  /**
   * Bytes of pipeline request bodies read and parsed at once, process-wide (manifest
   * `server.maxBodyBytesInFlight`); a body that does not fit gets 503 `bodies_in_flight_full`.
   * Default `DEFAULT_MAX_BODY_BYTES_IN_FLIGHT`.
   */
  maxBodyBytesInFlight?: number;
  /**
   * Of them, bytes one principal may hold: a gateway user, or a client address before authentication
   * (manifest `server.maxBodyBytesInFlightPerUser`). Default `maxBodyBytesInFlight`.
   */
  maxBodyBytesInFlightPerUser?: number;
  drainTimeoutMs: number;
  /** Client-side limits (manifest `server`); `CONNECTION_DEFAULTS` where absent. */
  connections?: Partial<ConnectionSettings>;
  /** Wall clock for `Exchange.startedAtMs` (log timestamps, key expiry); default `Date.now`. */
  clock?: Clock;
  /** Extra local routes outside the pipeline (`GET /healthz` is built in). Key: "METHOD /path". */
  localRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse, requestId: string) => void | Promise<void>>;
  /** Local handlers for a whole subtree: `prefix` itself and every path under `prefix/` (the admin UI). */
  prefixRoutes?: ReadonlyArray<{ prefix: string; handle(req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void> }>;
  /** CORS for `/api/*` (`cors.ts`); null or absent = off. */
  cors?: Cors | null;
  /**
   * Detail added to `GET /readyz`'s body beside `status` (the upstreams' breaker and key states).
   * Informational: readiness itself is only "not draining", since a gateway whose upstreams fail
   * still answers (fallbacks, errors in the contract's shape) and must stay in its load balancer.
   */
  readinessDetail?: () => Record<string, unknown>;
}

/** Timeouts and caps on client connections, in ms and counts (manifest `server`, docs/contract.md). */
export interface ConnectionSettings {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** Connections per address serving no request (see `connection-limits.ts`). */
  maxIdleConnectionsPerAddress: number;
}

const CONNECTION_DEFAULTS: ConnectionSettings = {
  headersTimeoutMs: 20_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 65_000, maxConnections: 4096, maxConnectionsPerAddress: 256,
  maxIdleConnectionsPerAddress: 64,
};

export interface GatewayServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, drains in-flight exchanges (bounded), closes connections. Idempotent. */
  shutdown(): Promise<void>;
  /** In-flight pipeline exchanges. */
  inFlight(): number;
}

/**
 * Every pipeline endpoint: the dialects' model calls, then the endpoints of the listed plugins (in
 * manifest order). The OpenAPI document is built from the same list.
 */
export function pipelineRoutes(plugins: readonly PluginFactory[]): PipelineRoute[] {
  return [
    ...dialects.flatMap((dialect) => dialect.routes.map((route) => Object.assign({}, route, { dialect }))),
    ...plugins.flatMap((plugin) => (plugin.routes ?? []).map((route) => Object.assign({}, route, { dialect: null }))),
  ];
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** The route of a path under `/api` that no route declares (see `UNKNOWN_ENDPOINT`); not in the OpenAPI document. */
function unknownEndpoint(method: string, dialect: Dialect | null): PipelineRoute {
  return {
    method: method === 'POST' || method === 'DELETE' ? method : 'GET', path: '/api/{unknown}', operation: UNKNOWN_ENDPOINT, dialect,
    doc: { operationId: 'unknownEndpoint', summary: '', description: '', tag: { name: '', description: '' }, success: {}, errors: {} },
  };
}

/** Random bytes for request ids, refilled 256 ids at a time (one `randomFillSync` instead of one per request). */
const idEntropy = Buffer.alloc(10 * 256);
let idEntropyAt = idEntropy.length;

/**
 * A new request id: `req_` + 32 hex digits, time-ordered: 12 of the wall clock's milliseconds, then 20
 * random. Ids that grow with time land at the end of the request log's unique index instead of all
 * over it: random ones made SQLite's row insert about twice as slow (~45 vs ~22 µs a row, measured
 * with 100k rows), and the gap grows with the table.
 */
export function newRequestId(): string {
  if (idEntropyAt === idEntropy.length) {
    randomFillSync(idEntropy);
    idEntropyAt = 0;
  }
  const random = idEntropy.toString('hex', idEntropyAt, idEntropyAt + 10);
  idEntropyAt += 10;
  return `req_${Date.now().toString(16).padStart(12, '0')}${random}`;
}

/** 256 MiB: eight bodies at Anthropic's 32 MiB limit, each costing about three times its size until parsed. */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 256 * 1024 * 1024;

/**
 * What the request handling of one server reads, built once by `createGatewayServer` and passed to
 * the module's functions (a record, not closures over the factory's locals, so each reads as a named
 * function in stack traces and takes what it needs explicitly).
 */
interface ServerContext {
  readonly options: GatewayServerOptions;
  readonly pipeline: Pipeline;
  readonly log: Log;
  readonly clock: Clock;
  readonly table: RouteTable<PipelineRoute>;
  readonly bodiesInFlight: BodyBytesInFlight;
  readonly running: RunningExchanges;
  readonly localRoutes: NonNullable<GatewayServerOptions['localRoutes']>;
  /** Local routes' paths, checked before the route table. */
  readonly localPaths: ReadonlySet<string>;
  /** `prefixRoutes` with `prefix/` precomputed: the admin subtree is checked on every request. */
  readonly prefixes: ReadonlyArray<NonNullable<GatewayServerOptions['prefixRoutes']>[number] & { under: string }>;
  readonly drain: DrainState;
}

/** A server's shutdown, as it goes. */
interface DrainState {
  /** True once `shutdown()` began: new pipeline requests get 503 and `/readyz` says `draining`. */
  draining: boolean;
  /** Resolves the drain's wait when the last running exchange ends. */
  drainedResolve: (() => void) | null;
  /** The one drain `shutdown()` started (it is idempotent). */
  shutdownPromise: Promise<void> | null;
}

/** Builds the gateway's HTTP server (not listening yet: `listen`), wiring the module's functions to one `ServerContext`. */
export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  const drain: DrainState = { draining: false, drainedResolve: null, shutdownPromise: null };
  const localRoutes = Object.assign(builtInRoutes(options, drain), options.localRoutes);
  const ctx: ServerContext = {
    options,
    pipeline: options.pipeline,
    log: options.log,
    clock: options.clock ?? systemClock,
    table: createRouteTable(options.routes),
    bodiesInFlight: createBodyBytesInFlight(options.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT, options.maxBodyBytesInFlightPerUser),
    running: new RunningExchanges(),
    localRoutes,
    localPaths: new Set(Object.keys(localRoutes).map((key) => key.slice(key.indexOf(' ') + 1))),
    prefixes: (options.prefixRoutes ?? []).map((subtree) => Object.assign({}, subtree, { under: `${subtree.prefix}/` })),
    drain,
  };
  const server = createHttpServer(ctx);
  return {
    server,
    listen: (port, host) => listen(ctx, server, port, host),
    shutdown() {
      drain.shutdownPromise ??= drainAndClose(ctx, server);
      return drain.shutdownPromise;
    },
    inFlight: () => ctx.running.size,
  };
}

/** `GET /healthz` and `GET /readyz` (the latter `draining` once shutdown began, with `readinessDetail`). */
function builtInRoutes(options: GatewayServerOptions, drain: DrainState): NonNullable<GatewayServerOptions['localRoutes']> {
  return {
    'GET /healthz': (_req, res, id) => sendJson(res, 200, { status: 'ok' }, id),
    'GET /readyz': (_req, res, id) =>
      drain.draining ? sendJson(res, 503, { status: 'draining' }, id) : sendJson(res, 200, { status: 'ready', ...options.readinessDetail?.() }, id),
  };
}

/** The node:http server with the client-side limits, the connection caps and the client-error answers. */
function createHttpServer(ctx: ServerContext): Server {
  const limits = Object.assign({}, CONNECTION_DEFAULTS, ctx.options.connections);
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    // Node checks both timeouts on this interval (30 s by default, far coarser than a short headers timeout).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
  }, (req, res) => {
    void handle(ctx, req, res);
  });
  // From the first request on, request-scoped literals are not pretenured (`v8-pretenuring.ts`).
  server.once('request', stopPretenuring);
  // Not `server.maxConnections`: at the cap an idle connection makes room (`connection-limits.ts`).
  limitConnections(server, limits);
  answerClientErrors(server, newRequestId, (code, err) => ctx.log.debug('client error', { code, cause: err.message }));
  return server;
}

/** Answers one request: CORS, a local route, a prefix subtree, or a pipeline exchange; any failure as the route's dialect's error. */
async function handle(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = newRequestId();
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  let route: PipelineRoute | null = null;
  let matched: RouteMatch = null;
  const { cors } = ctx.options;
  if (cors && path.startsWith('/api/') && cors.apply(req, res, requestId)) return;
  try {
    const local = ctx.localPaths.has(path) ? ctx.localRoutes[`${method} ${path}`] : undefined;
    if (local) return await local(req, res, requestId);
    for (const subtree of ctx.prefixes) {
      if (path === subtree.prefix || path.startsWith(subtree.under)) return await subtree.handle(req, res, requestId, path);
    }
    matched = ctx.table.match(path);
    if (!matched && path.startsWith('/api/')) {
      if (ctx.drain.draining) throw shuttingDown();
      // The 404 speaks the dialect the path looks like (its 401 too), and names the base URL its clients want.
      const guess = guessBaseUrlMistake(path);
      const refusal = endpointNotFound(method, path, endpointsNear(ctx.table.routes, path), guess?.hint);
      return await runExchange(ctx, req, res, requestId, method, path, unknownEndpoint(method, guess?.dialect ?? null), NO_PARAMS, refusal);
    }
    if (!matched) throw routeNotFound(method, path);
    route = matched.byMethod.get(method) ?? null;
    if (!route && isUnknownCustomMethod(method, path, matched.byMethod)) {
      // A POST to `.../models/x:fooBar` matches the GET `/{model+}` route only because a model id may hold
      // a `:` (`llama3:8b`); what the client meant is a method this gateway does not serve: 404, as Google's own API answers.
      const refusal = endpointNotFound(method, path, endpointsNear(ctx.table.routes, path));
      const dialectRoute = [...matched.byMethod.values()][0]!;
      return await runExchange(ctx, req, res, requestId, method, path, unknownEndpoint(method, dialectRoute.dialect ?? null), NO_PARAMS, refusal);
    }
    if (!route) throw methodNotAllowed(method, path, [...matched.byMethod.keys()].join(', '));
    if (ctx.drain.draining) throw shuttingDown();
    await runExchange(ctx, req, res, requestId, method, path, route, matched.params, null, q === -1 ? '' : url.slice(q + 1));
  } catch (err) {
    sendRequestError(ctx.log, req, res, requestId, err, route, matched);
  }
}

type RouteMatch = ReturnType<ServerContext['table']['match']>;

/** The error of a request that failed before its exchange ran (bad body, unknown path, 405), in the route's dialect. */
function sendRequestError(
  log: Log, req: IncomingMessage, res: ServerResponse, requestId: string, err: unknown, route: PipelineRoute | null, matched: RouteMatch,
): void {
  const error = toGatewayError(err);
  if (error.code === 'internal_error') log.error('request failed', { requestId, err });
  // Before the exchange exists (bad body, unknown path) the error still speaks the route's dialect,
  // or the dialect of the matched path whatever the method: a 405 on /v1/messages speaks Anthropic.
  const pathDialect = matched ? [...matched.byMethod.values()].find((r) => r.dialect)?.dialect : null;
  const errorBody = (route?.dialect ?? pathDialect)?.errorBody ?? openAIErrorBody;
  if (req.readableEnded || req.destroyed) sendError(res, error, requestId, undefined, errorBody);
  else sendError(res, error, requestId, { connection: 'close' }, errorBody);
}

/**
 * Whether a request names an AIP-136 custom method (`/resource:verbNoun`) on a path that is served only
 * for reads: the last segment ends in `:` + a lower-camel-case word, and the method is not GET/HEAD
 * while the path serves only those. Model ids such as `llama3:8b` end in a digit-led tag, so they stay 405s.
 */
function isUnknownCustomMethod(method: string, path: string, byMethod: ReadonlyMap<string, unknown>): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
  for (const served of byMethod.keys()) if (served !== 'GET' && served !== 'HEAD') return false;
  return /:[a-z][A-Za-z]*$/.test(path.slice(path.lastIndexOf('/') + 1));
}

/** `METHOD /path` of every declared endpoint under the path's version prefix (`/api/v1`), else under `/api`. */
function endpointsNear(routes: readonly PipelineRoute[], path: string): string[] {
  const version = /^\/api\/v\d+\//.exec(path)?.[0];
  const under = version && routes.some((r) => r.path.startsWith(version)) ? version : '/api/';
  return routes.filter((r) => r.path.startsWith(under)).map((r) => `${r.method} ${r.path.replace('+}', '}')}`);
}

/** Builds the exchange of a pipeline route and runs it through the pipeline; tracked in `running` until it ends. */
async function runExchange(
  ctx: ServerContext, req: IncomingMessage, res: ServerResponse, requestId: string, method: string, path: string,
  route: PipelineRoute, params: Readonly<Record<string, string>>, refusal: GatewayError | null = null, search = '',
): Promise<void> {
  const startedAtPerfMs = performance.now();
  const startedAtMs = ctx.clock();
  const { dialect } = route;
  const cancellation = new ExchangeAbort();
  const ex = new LiveExchange({
    id: requestId,
    operation: route.operation,
    method,
    path,
    headers: req.headers,
    params,
    query: search ? Object.fromEntries(new URLSearchParams(search)) : NO_PARAMS,
    startedAtMs,
    startedAtPerfMs,
    cancellation,
    dialect,
    refusal,
  });
  res.on('close', () => {
    if (res.writableFinished) return;
    ex.clientAborted = true;
    cancellation.abort();
  });
  ctx.running.add(cancellation);
  const hasBody = dialect !== null && route.hasBody === true;
  try {
    await ctx.pipeline.run(ex, res, hasBody ? () => loadBody(ctx, req, ex, dialect, route) : undefined);
  } finally {
    ctx.running.delete(cancellation);
    if (ctx.drain.draining && ctx.running.size === 0) ctx.drain.drainedResolve?.();
  }
}

/**
 * Reads and parses an exchange's body into it (the pipeline calls this once authentication passed
 * and the `beforeBody` hooks held their slots). Its bytes count against `bodiesInFlight`, and its
 * principal's share of them, until it is parsed. A refused body (400, 413, 503) closes the connection
 * when part of it was left unread.
 */
async function loadBody(ctx: ServerContext, req: IncomingMessage, ex: Exchange, dialect: Dialect, route: PipelineRoute): Promise<void> {
  const { bodiesInFlight } = ctx;
  const maxBodyBytes = ctx.options.maxBodyBytesByDialect?.[dialect.id] || ctx.options.maxBodyBytes;
  // The user's share once authenticated; a route without authentication shares its client address's.
  const hold = bodiesInFlight.hold(ex.principal ? `user:${ex.principal.gatewayUserId}` : `address:${req.socket.remoteAddress ?? ''}`);
  try {
    const value = await parseJsonBodyOffThread(await readRequestBody(req, maxBodyBytes, hold));
    hold.release();
    const parsed = dialect.parseRequest(value, route.operation, req.headers, ex.params);
    ex.request = parsed.canonical;
    ex.clientBody = parsed.body;
    ex.untranslatable = parsed.untranslatable ?? null;
    ex.ownCredentialOnly = parsed.ownCredentialOnly ?? null;
    ex.stream = parsed.stream;
    ex.clientWantsUsage = parsed.wantsStreamUsage;
  } catch (err) {
    if (err instanceof GatewayError && !req.readableEnded) err.headers.connection = 'close';
    throw err;
  } finally {
    hold.release();
  }
}

/** Starts listening on `host:port`; rejects with the listen error (`EADDRINUSE`, ...). */
function listen(ctx: ServerContext, server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // Start-up's memory goes back when nothing is served for a few seconds (`start-up-memory.ts`).
      releaseStartUpMemoryWhenIdle(server, (ms) => ctx.log.debug('gave back the start-up memory', { gcMs: Math.round(ms), rssMb: Math.round(process.memoryUsage.rss() / 1_048_576) }));
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * How long the exchanges cut at the drain timeout may take to run their response hooks, in ms. They
 * normally end within milliseconds (the drain resolves as soon as the last one did); the bound is for
 * a hook stuck on a dependency. 2 s was too short on a loaded machine: a cut stream's log row was lost.
 */
const CUT_EXCHANGES_GRACE_MS = 10_000;

/** Stops accepting, waits for the running exchanges up to `drainTimeoutMs`, cuts the rest, closes every connection. */
async function drainAndClose(ctx: ServerContext, server: Server): Promise<void> {
  const { running, log, drain } = ctx;
  drain.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (running.size > 0) {
    const drained = new Promise<void>((resolve) => (drain.drainedResolve = resolve));
    const waitMs = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout').unref());
    if ((await Promise.race([drained, waitMs(ctx.options.drainTimeoutMs)])) === 'timeout') {
      log.warn('drain timeout: cutting in-flight requests', { inFlight: running.size });
      for (const cancellation of running.list()) cancellation.abort(gatewayShutdown());
      // Cut exchanges still run their response hooks (the logger records them, the budget settles):
      // wait for them, bounded so a hook stuck on a dead dependency cannot hold the shutdown for ever.
      await Promise.race([drained, waitMs(CUT_EXCHANGES_GRACE_MS)]);
    }
  }
  server.closeAllConnections();
  await closed;
}
