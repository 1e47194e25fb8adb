/**
 * The HTTP front: node:http, one `Exchange` per pipeline request, routing by method and path, and
 * graceful shutdown (stop accepting, let in-flight requests and streams finish within
 * `drainTimeoutMs`, then cut the rest). Every response carries `x-request-id`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Exchange, Operation } from './exchange.ts';
import type { Pipeline } from './pipeline.ts';
import type { ChatCompletionRequest } from './chat-types.ts';
import type { Log } from './log.ts';
import { methodNotAllowed, routeNotFound, shuttingDown, toGatewayError } from './errors.ts';
import { sendError, sendJson } from './respond.ts';
import { createBodyValidator, parseJsonBody, readRequestBody } from './request-body.ts';
import { chatCompletionRequestSchema } from './chat-request-schema.ts';
import { systemClock, type Clock } from './clock.ts';

export interface GatewayServerOptions {
  pipeline: Pipeline;
  log: Log;
  maxBodyBytes: number;
  drainTimeoutMs: number;
  /** Wall clock for `Exchange.startedAtMs` (log timestamps, key expiry); default `Date.now`. */
  clock?: Clock;
  /** Extra local routes outside the pipeline (`GET /healthz` is built in). Key: "METHOD /path". */
  localRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse, requestId: string) => void | Promise<void>>;
  /** Local handlers for a whole subtree: `prefix` itself and every path under `prefix/` (the admin UI). */
  prefixRoutes?: ReadonlyArray<{ prefix: string; handle(req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void> }>;
}

export interface GatewayServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, drains in-flight exchanges (bounded), closes connections. Idempotent. */
  shutdown(): Promise<void>;
  /** In-flight pipeline exchanges. */
  inFlight(): number;
}

interface PipelineRoute {
  operation: Operation;
  hasBody: boolean;
}

const PIPELINE_ROUTES: Record<string, Record<string, PipelineRoute>> = {
  '/api/v1/chat/completions': { POST: { operation: 'chat.completions', hasBody: true } },
  '/api/v1/models': { GET: { operation: 'models.list', hasBody: false } },
  '/api/models': { GET: { operation: 'models.catalog', hasBody: false } },
  '/api/account': { GET: { operation: 'account.get', hasBody: false } },
  '/api/pricing': { GET: { operation: 'pricing.list', hasBody: false } },
};

/** Routes with one trailing path parameter: prefix → parameter name and methods. */
const PARAM_ROUTES: Array<{ prefix: string; param: string; methods: Record<string, PipelineRoute> }> = [
  { prefix: '/api/providers/', param: 'provider', methods: { GET: { operation: 'providers.get', hasBody: false } } },
];

interface RouteMatch {
  byMethod: Record<string, PipelineRoute>;
  params: Readonly<Record<string, string>>;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
/** Exact paths' matches, built once: the common case allocates nothing per request. */
const EXACT_MATCHES = new Map<string, RouteMatch>(Object.entries(PIPELINE_ROUTES).map(([path, byMethod]) => [path, { byMethod, params: NO_PARAMS }]));

/** The pipeline route for `path` and its path parameters, or null. */
function matchRoute(path: string): RouteMatch | null {
  const exact = EXACT_MATCHES.get(path);
  if (exact) return exact;
  for (const route of PARAM_ROUTES) {
    if (!path.startsWith(route.prefix)) continue;
    const raw = path.slice(route.prefix.length);
    if (!raw || raw.includes('/')) return null;
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return null;
    }
    return { byMethod: route.methods, params: { [route.param]: value } };
  }
  return null;
}

/** A new request id: `req_` + 32 hex digits. */
export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '')}`;
}

export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  const { pipeline, log } = options;
  const clock = options.clock ?? systemClock;
  const validateChat = createBodyValidator<ChatCompletionRequest>(chatCompletionRequestSchema);
  const running = new Set<AbortController>();
  let draining = false;
  let drainedResolve: (() => void) | null = null;
  const localRoutes: NonNullable<GatewayServerOptions['localRoutes']> = {
    'GET /healthz': (_req, res, id) => sendJson(res, 200, { status: 'ok' }, id),
    'GET /readyz': (_req, res, id) =>
      draining ? sendJson(res, 503, { status: 'draining' }, id) : sendJson(res, 200, { status: 'ready' }, id),
    ...options.localRoutes,
  };
  const prefixes = options.prefixRoutes ?? [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    try {
      const local = localRoutes[`${method} ${path}`];
      if (local) return await local(req, res, requestId);
      for (const subtree of prefixes) {
        if (path === subtree.prefix || path.startsWith(`${subtree.prefix}/`)) return await subtree.handle(req, res, requestId, path);
      }
      const matched = matchRoute(path);
      if (!matched) throw routeNotFound(method, path);
      const route = matched.byMethod[method];
      if (!route) throw methodNotAllowed(method, path, Object.keys(matched.byMethod).join(', '));
      if (draining) throw shuttingDown();
      await runExchange(req, res, requestId, method, path, route, matched.params);
    } catch (err) {
      const error = toGatewayError(err);
      if (error.code === 'internal_error') log.error('request failed', { requestId, err });
      if (req.readableEnded || req.destroyed) sendError(res, error, requestId);
      else sendError(res, error, requestId, { connection: 'close' });
    }
  }

  async function runExchange(
    req: IncomingMessage, res: ServerResponse, requestId: string, method: string, path: string,
    route: PipelineRoute, params: Readonly<Record<string, string>>,
  ): Promise<void> {
    const startedAtPerfMs = performance.now();
    const startedAtMs = clock();
    let body: ChatCompletionRequest | null = null;
    if (route.hasBody) body = validateChat(parseJsonBody(await readRequestBody(req, options.maxBodyBytes)));
    const controller = new AbortController();
    const ex: Exchange = {
      id: requestId,
      operation: route.operation,
      method,
      path,
      headers: req.headers,
      params,
      startedAtMs,
      startedAtPerfMs,
      signal: controller.signal,
      body,
      stream: body?.stream === true,
      clientWantsUsage: body?.stream === true && body.stream_options?.include_usage === true,
      principal: null,
      target: null,
      modelServed: null,
      usage: null,
      usageEstimated: false,
      promptTokensEstimate: null,
      generated: [],
      upstreamStatus: null,
      cost: null,
      status: 0,
      errorCode: null,
      firstByteAtPerfMs: null,
      clientAborted: false,
      responseHeaders: {},
      states: [],
    };
    res.on('close', () => {
      if (res.writableFinished) return;
      ex.clientAborted = true;
      controller.abort();
    });
    running.add(controller);
    try {
      await pipeline.run(ex, res);
    } finally {
      running.delete(controller);
      if (draining && running.size === 0) drainedResolve?.();
    }
  }

  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    void handle(req, res);
  });

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
        for (const controller of running) controller.abort();
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
