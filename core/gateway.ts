/**
 * Boot and shutdown of the whole gateway: data dir (database, master key, bootstrap admin), plugins
 * in manifest order, the pipeline, the HTTP server. `tollgate serve` and the tests use this.
 */
import type { AddressInfo } from 'node:net';
import type { Manifest } from './manifest.ts';
import type { Plugin, PluginContext, PluginFactory } from './plugin.ts';
import { createPipeline } from './pipeline.ts';
import { createGatewayServer, pipelineRoutes, type GatewayServer } from './server.ts';
import { createUpstreamClient } from './upstream/upstream-client.ts';
import { createLog, type Log } from './runtime/log.ts';
import { createKeyringSource, databaseUrl, openGatewayStore } from './store/data-dir.ts';
import { countAdmins, createAdmin } from './accounts/admin-users.ts';
import { generatePassword } from './accounts/passwords.ts';
import { isUniqueViolation, PATIENT_BUSY_TIMEOUT_MS, SERVING_BUSY_TIMEOUT_MS, setBusyTimeout, type Store } from './store/store.ts';
import { systemClock, type Clock } from './runtime/clock.ts';
import { createServiceRegistry, type ProviderSummary, type RequestLogService, type UpstreamHealthService } from './services.ts';
import { createTokenEstimator } from './tokens/token-estimate.ts';
import { closeParseWorkers, compileBodyValidators } from './http/request-body.ts';
import { createMetricsRegistry, metricsRoute } from './runtime/metrics.ts';
import { apiDocsRoutes } from './openapi/api-docs.ts';
import { createAdminMount, type AdminMount } from './admin/index.ts';
import { createSsoClient } from './admin/oidc-routes.ts';
import { redirectToAdmin } from './admin/static-routes.ts';
import { createPortalMount, type PortalMount } from './portal/index.ts';
import { createCors } from './http/cors.ts';
import { fileLimitWarning, openFilesLimit } from './http/connection-limits.ts';
import { createCoordination, type Coordination } from './coordination/index.ts';
import { createDatabaseKv } from './store/plugin-kv-database.ts';
import type { PluginKvEngine } from './store/plugin-kv.ts';
import { resolveTracing } from './telemetry/tracing-settings.ts';
import { createOtelTracing } from './telemetry/otel-tracing.ts';
import type { RequestTracing } from './telemetry/request-tracing.ts';
import { createReconcileJob, type ReconcileJob } from './reconcile/reconcile-job.ts';

/**
 * `GET /readyz`'s detail: each deployment's breaker state (`closed`, `open`, `half-open`) by
 * `provider/model` (those of the manifest, or that served once), and per provider the count of
 * pooled keys in each state (`ok`, `cooling`, `disabled`): /readyz is public, so no key is named.
 * Empty without a router that reports them.
 */
function upstreamReadiness(health: UpstreamHealthService | undefined): Record<string, unknown> {
  return health ? { upstreams: health.readiness() } : {};
}

/**
 * `GET /readyz`'s view of the database: the store's own (`{engine, status}`; PostgreSQL: its last
 * probe or failed query), `down` too while the request log's writes fail (`writesFailing`), with the
 * writes kept in memory for it (`queuedWrites`) and those dropped since start (`droppedWrites`).
 */
function storeReadiness(store: Store, requestLog: RequestLogService | undefined): Record<string, unknown> {
  const own = store.readiness();
  const log = requestLog?.status?.();
  if (!log) return own;
  return { ...own, status: log.failing ? 'down' : own.status, writesFailing: log.failing, queuedWrites: log.queued, droppedWrites: log.dropped };
}

/** `GET /readyz`'s view of the shared store (`coordination: {redis, fail_mode}`); nothing in one process. */
function coordinationReadiness(coordination: Coordination | null): Record<string, unknown> {
  const detail = coordination?.readiness();
  return detail ? { coordination: detail } : {};
}

/** Reported by `GET /admin/api/me`. */
export const GATEWAY_VERSION = '0.1.0';

export interface StartGatewayOptions {
  manifest: Manifest;
  registry: ReadonlyMap<string, PluginFactory>;
  dataDir: string;
  /** Override the manifest's `server.host` / `server.port`. */
  host?: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
  log?: Log;
  /** Wall clock for plugins (budgets, rate limits); tests inject a settable one. */
  clock?: Clock;
}

export interface RunningGateway {
  /** `http://host:port` */
  readonly origin: string;
  readonly address: AddressInfo;
  readonly store: Store;
  /** Set when this start created the bootstrap admin; the password is shown once. */
  readonly bootstrapAdmin: { username: string; password: string; generated: boolean } | null;
  /** The router's configured providers, in manifest order (for the start banner); empty without a router. */
  readonly providers: readonly ProviderSummary[];
  readonly server: GatewayServer;
  /** The daily reconciliation (`reconcile/reconcile-job.ts`); `tick()` checks at once whether it is due. */
  readonly reconciliation: ReconcileJob;
  /** Drains requests, closes plugins (flushing the request log), the upstream pools and the store. */
  close(): Promise<void>;
}

async function bootstrapAdmin(store: Store, env: NodeJS.ProcessEnv): Promise<RunningGateway['bootstrapAdmin']> {
  if ((await countAdmins(store.db)) > 0) return null;
  const fromEnv = env.TOLLGATE_ADMIN_PASSWORD;
  const password = fromEnv || generatePassword();
  try {
    await createAdmin(store.db, 'admin', password);
  } catch (err) {
    // Several replicas started together on a new database: another one created it first.
    if (isUniqueViolation(err)) return null;
    throw err;
  }
  return { username: 'admin', password, generated: !fromEnv };
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { manifest, registry } = options;
  const env = options.env ?? process.env;
  const log = options.log ?? createLog(manifest.server.logLevel);
  const metrics = createMetricsRegistry();
  const store = await openGatewayStore(options.dataDir, { url: databaseUrl(manifest.store, env), maxConnections: manifest.store.maxConnections, log, metrics });
  const upstream = createUpstreamClient(manifest.upstream);
  const filesLimit = openFilesLimit();
  log.info('open-file limit', { soft: filesLimit?.soft ?? null, hard: filesLimit?.hard ?? null, maxConnections: manifest.server.maxConnections });
  const filesWarning = fileLimitWarning(manifest.server.maxConnections, filesLimit);
  if (filesWarning) log.warn(filesWarning);
  const plugins: Plugin<unknown>[] = [];
  let server: GatewayServer | null = null;
  let admin: AdminMount | null = null;
  let portal: PortalMount | null = null;
  let coordination: Coordination | null = null;
  let kv: PluginKvEngine | null = null;
  let tracing: RequestTracing | null = null;
  try {
    const keyring = createKeyringSource(options.dataDir, env);
    const firstAdmin = await bootstrapAdmin(store, env);
    const tokens = createTokenEstimator(log);
    const clock = options.clock ?? systemClock;
    coordination = await createCoordination(manifest.coordination, { log, clock, env, metrics });
    const pluginKv = coordination.pluginKv ?? createDatabaseKv(store, { clock, leases: coordination.leases, log });
    kv = pluginKv;
    const ctx: PluginContext = {
      store, log, dataDir: options.dataDir, upstream, keyring,
      clock, services: createServiceRegistry(), tokens, metrics, rateCounters: coordination.rateCounters, budgetCounters: coordination.budgetCounters, leases: coordination.leases,
      pluginKv,
    };
    for (const entry of manifest.plugins) plugins.push(await registry.get(entry.name)!.create(entry.config, ctx, entry));
    const tracingSettings = resolveTracing(manifest.tracing, env);
    if (tracingSettings) {
      tracing = await createOtelTracing(tracingSettings, { log, version: GATEWAY_VERSION });
      log.info('tracing on', { otlpEndpoint: tracingSettings.url, serviceName: tracingSettings.serviceName, sampleRatio: tracingSettings.sampleRatio, capturePrompts: tracingSettings.capturePrompts });
    }
    const pipeline = createPipeline(plugins, { upstream, maxResponseBytes: manifest.upstream.maxResponseBytes, maxStreamBytes: manifest.upstream.maxStreamBytes, log, tokens, tracing });
    let origin = '';
    // Calls to itself (the admin key test) go to loopback even when listening on every interface.
    let loopbackOrigin = '';
    // One OpenID Connect client (one discovery, one JWKS cache) for the admin UI's and the portal's sign-in.
    const oidc = manifest.admin.oidc;
    const ssoClient = oidc && (manifest.admin.enabled || manifest.portal.enabled) ? createSsoClient(oidc, env, ctx.clock) : undefined;
    if (manifest.admin.enabled) {
      admin = createAdminMount(
        { store, log, clock: ctx.clock, services: ctx.services, keyring, selfOrigin: () => loopbackOrigin, notifyChange: () => store.notifyChange() },
        manifest.admin,
        GATEWAY_VERSION,
        coordination.loginThrottle(manifest.admin.loginMaxFailures, manifest.admin.loginWindowMinutes * 60_000),
        manifest.server.headersTimeoutMs,
        env,
        ssoClient,
      );
    }
    if (manifest.portal.enabled) {
      portal = createPortalMount(
        { store, log, clock: ctx.clock, services: ctx.services, notifyChange: () => store.notifyChange() },
        manifest.portal,
        oidc && ssoClient ? { client: ssoClient, settings: oidc, keyring } : undefined,
      );
    }
    compileBodyValidators();
    const routes = pipelineRoutes(manifest.plugins.map((entry) => registry.get(entry.name)!));
    server = createGatewayServer({
      pipeline, log, routes, maxBodyBytes: manifest.server.maxBodyBytes, maxBodyBytesByDialect: manifest.server.maxBodyBytesByDialect,
      maxBodyBytesInFlight: manifest.server.maxBodyBytesInFlight,
      maxBodyBytesInFlightPerUser: manifest.server.maxBodyBytesInFlightPerUser, drainTimeoutMs: manifest.server.drainTimeoutMs, clock: ctx.clock,
      connections: manifest.server,
      localRoutes: { 'GET /metrics': metricsRoute(metrics), ...apiDocsRoutes(routes), ...(admin ? { 'GET /': redirectToAdmin } : {}) },
      prefixRoutes: [...(admin ? [{ prefix: '/admin', handle: admin.handle }] : []), ...(portal ? [{ prefix: '/portal', handle: portal.handle }] : [])],
      cors: createCors(manifest.server.cors),
      readinessDetail: () => ({ store: storeReadiness(store, ctx.services.get('requestLog')), ...upstreamReadiness(ctx.services.get('upstreamHealth')), ...coordinationReadiness(coordination) }),
    });
    const host = options.host ?? manifest.server.host;
    const address = await server.listen(options.port ?? manifest.server.port, host);
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    origin = `http://${urlHost}:${address.port}`;
    const loopbackHost = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '[::1]' : urlHost;
    loopbackOrigin = `http://${loopbackHost}:${address.port}`;
    // From now on a lock held by another process must not freeze the event loop (store.ts says why).
    setBusyTimeout(store, SERVING_BUSY_TIMEOUT_MS);
    const reconciliation = createReconcileJob({ db: store.db, keyring: () => keyring.get(), clock: ctx.clock, log, leases: coordination.leases }, manifest.reconciliation);
    const adminMount = admin;
    const portalMount = portal;
    const running = server;
    const shared = coordination;
    const tracer = tracing;
    let closing: Promise<void> | null = null;
    return {
      origin,
      address,
      store,
      bootstrapAdmin: firstAdmin,
      providers: ctx.services.get('providers')?.list() ?? [],
      server: running,
      reconciliation,
      close() {
        closing ??= (async () => {
          await reconciliation.close();
          await running.shutdown();
          adminMount?.close();
          portalMount?.close();
          // Serving is over: the last flush may wait for another process's lock.
          setBusyTimeout(store, PATIENT_BUSY_TIMEOUT_MS);
          await pipeline.close();
          // The drained requests' spans are exported before the process goes.
          await tracer?.close();
          await pluginKv.close();
          await shared.close();
          await upstream.close();
          await store.close();
          await closeParseWorkers();
        })();
        return closing;
      },
    };
  } catch (err) {
    await server?.shutdown();
    await tracing?.close();
    admin?.close();
    portal?.close();
    for (const plugin of plugins.reverse()) await plugin.close?.();
    await kv?.close();
    await coordination?.close();
    await upstream.close();
    await store.close();
    throw err;
  }
}
