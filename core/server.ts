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
import { createBodyBytesInFlight, parseJsonBodyOffThread, readRequestBody } from './http/request-body.ts';
import { systemClock, type Clock } from './runtime/clock.ts';
import { createRouteTable, UNKNOWN_ENDPOINT, type RouteDeclaration } from './routes.ts';
import { dialects, openAIErrorBody, type Dialect } from './dialects/index.ts';
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
function unknownEndpoint(method: string): PipelineRoute {
  return {
    method: method === 'POST' || method === 'DELETE' ? method : 'GET', path: '/api/{unknown}', operation: UNKNOWN_ENDPOINT, dialect: null,
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

export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  const { pipeline, log } = options;
  const bodiesInFlight = createBodyBytesInFlight(options.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
  const clock = options.clock ?? systemClock;
  const table = createRouteTable(options.routes);
  const running = new RunningExchanges();
  let draining = false;
  let drainedResolve: (() => void) | null = null;
  const localRoutes: NonNullable<GatewayServerOptions['localRoutes']> = {
    'GET /healthz': (_req, res, id) => sendJson(res, 200, { status: 'ok' }, id),
    'GET /readyz': (_req, res, id) =>
      draining ? sendJson(res, 503, { status: 'draining' }, id) : sendJson(res, 200, { status: 'ready', ...options.readinessDetail?.() }, id),
    ...options.localRoutes,
  };
  // `prefix/` precomputed: the admin subtree is checked on every request.
  const prefixes = (options.prefixRoutes ?? []).map((subtree) => Object.assign({}, subtree, { under: `${subtree.prefix}/` }));
  const localPaths = new Set(Object.keys(localRoutes).map((key) => key.slice(key.indexOf(' ') + 1)));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    let route: PipelineRoute | null = null;
    let matched: ReturnType<typeof table.match> = null;
    if (options.cors && path.startsWith('/api/') && options.cors.apply(req, res, requestId)) return;
    try {
      const local = localPaths.has(path) ? localRoutes[`${method} ${path}`] : undefined;
      if (local) return await local(req, res, requestId);
      for (const subtree of prefixes) {
        if (path === subtree.prefix || path.startsWith(subtree.under)) return await subtree.handle(req, res, requestId, path);
      }
      matched = table.match(path);
      if (!matched && path.startsWith('/api/')) {
        if (draining) throw shuttingDown();
        return await runExchange(req, res, requestId, method, path, unknownEndpoint(method), NO_PARAMS, endpointNotFound(method, path, endpointsNear(path)));
      }
      if (!matched) throw routeNotFound(method, path);
      route = matched.byMethod.get(method) ?? null;
      if (!route) throw methodNotAllowed(method, path, [...matched.byMethod.keys()].join(', '));
      if (draining) throw shuttingDown();
      await runExchange(req, res, requestId, method, path, route, matched.params, null, q === -1 ? '' : url.slice(q + 1));
    } catch (err) {
      const error = toGatewayError(err);
      if (error.code === 'internal_error') log.error('request failed', { requestId, err });
      // Before the exchange exists (bad body, unknown path) the error still speaks the route's dialect,
      // or the dialect of the matched path whatever the method: a 405 on /v1/messages speaks Anthropic.
      const pathDialect = matched ? [...matched.byMethod.values()].find((r) => r.dialect)?.dialect : null;
      const errorBody = (route?.dialect ?? pathDialect)?.errorBody ?? openAIErrorBody;
      if (req.readableEnded || req.destroyed) sendError(res, error, requestId, undefined, errorBody);
      else sendError(res, error, requestId, { connection: 'close' }, errorBody);
    }
  }

  /** `METHOD /path` of every declared endpoint under the path's version prefix (`/api/v1`), else under `/api`. */
  function endpointsNear(path: string): string[] {
    const version = /^\/api\/v\d+\//.exec(path)?.[0];
    const under = version && table.routes.some((r) => r.path.startsWith(version)) ? version : '/api/';
    return table.routes.filter((r) => r.path.startsWith(under)).map((r) => `${r.method} ${r.path.replace('+}', '}')}`);
  }

  async function runExchange(
    req: IncomingMessage, res: ServerResponse, requestId: string, method: string, path: string,
    route: PipelineRoute, params: Readonly<Record<string, string>>, refusal: GatewayError | null = null, search = '',
  ): Promise<void> {
    const startedAtPerfMs = performance.now();
    const startedAtMs = clock();
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
    running.add(cancellation);
    const hasBody = dialect !== null && route.hasBody === true;
    try {
      await pipeline.run(ex, res, hasBody ? () => loadBody(req, res, ex, dialect, route) : undefined);
    } finally {
      running.delete(cancellation);
      if (draining && running.size === 0) drainedResolve?.();
    }
  }

  /**
   * Reads and parses an exchange's body into it (the pipeline calls this once authentication passed
   * and the `beforeBody` hooks held their slots). Its bytes count against `bodiesInFlight` until it is
   * parsed. A refused body (400, 413, 503) closes the connection when part of it was left unread.
   */
  async function loadBody(req: IncomingMessage, res: ServerResponse, ex: Exchange, dialect: Dialect, route: PipelineRoute): Promise<void> {
    const maxBodyBytes = options.maxBodyBytesByDialect?.[dialect.id] || options.maxBodyBytes;
    const hold = bodiesInFlight.hold();
    try {
      const value = await parseJsonBodyOffThread(await readRequestBody(req, maxBodyBytes, { inFlight: bodiesInFlight, hold }));
      hold.release();
      const parsed = dialect.parseRequest(value, route.operation, req.headers);
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

  const limits = Object.assign({}, CONNECTION_DEFAULTS, options.connections);
  const server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    // Node checks both timeouts on this interval (30 s by default, far coarser than a short headers timeout).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
  }, (req, res) => {
    void handle(req, res);
  });
  // From the first request on, request-scoped literals are not pretenured (`v8-pretenuring.ts`).
  server.once('request', stopPretenuring);
  // Not `server.maxConnections`: at the cap an idle connection makes room (`connection-limits.ts`).
  limitConnections(server, limits);
  answerClientErrors(server, newRequestId, (code, err) => log.debug('client error', { code, cause: err.message }));

  let shutdownPromise: Promise<void> | null = null;
  async function drainAndClose(): Promise<void> {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (running.size > 0) {
      const drained = new Promise<void>((resolve) => (drainedResolve = resolve));
      const waitMs = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout').unref());
      if ((await Promise.race([drained, waitMs(options.drainTimeoutMs)])) === 'timeout') {
        log.warn('drain timeout: cutting in-flight requests', { inFlight: running.size });
        for (const cancellation of running.list()) cancellation.abort(gatewayShutdown());
        // Cut exchanges still run their response hooks (the logger records them); give them a moment.
        await Promise.race([drained, waitMs(2_000)]);
      }
    }
    server.closeAllConnections();
    await closed;
  }

  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          // Start-up's memory goes back when nothing is served for a few seconds (`start-up-memory.ts`).
          releaseStartUpMemoryWhenIdle(server, (ms) => log.debug('gave back the start-up memory', { gcMs: Math.round(ms), rssMb: Math.round(process.memoryUsage.rss() / 1_048_576) }));
          resolve(server.address() as AddressInfo);
        });
      });
    },
    shutdown() {
      shutdownPromise ??= drainAndClose();
      return shutdownPromise;
    },
    inFlight: () => running.size,
  };
}
