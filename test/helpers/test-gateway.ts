/**
 * The whole gateway in-process (real server, plugins, SQLite file in a temp dir, undici), with one
 * gateway user and API key, and the official `openai` SDK pointed at it. Provider tests use this with
 * their upstream simulator as the provider's base URL.
 */
import OpenAI from 'openai';
import type { Selectable } from 'kysely';
import { startGateway, type RunningGateway } from '../../core/gateway.ts';
import { validateManifest } from '../../core/manifest.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import { createGatewayUser, type UserFields } from '../../core/accounts/gateway-users.ts';
import type { Clock } from '../../core/runtime/clock.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { createLog } from '../../core/runtime/log.ts';
import type { LlmRequestsTable } from '../../core/store/db-types.ts';
import { tempDir } from './tmp.ts';
import { testStoreEnv } from './test-store.ts';

export type LogRow = Selectable<LlmRequestsTable>;

export interface TestGatewayOptions {
  /** provider-router `providers`, e.g. `{ anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant' } }`. */
  providers: Record<string, { type: string; baseUrl: string; apiKey?: string; apiKeys?: unknown[]; [setting: string]: unknown }>;
  /** Extra provider-router config (e.g. `catalogTtlMs`). */
  router?: Record<string, unknown>;
  /** Manifest `admin` settings (`oidc` single sign-on, session lifetimes). */
  admin?: Record<string, unknown>;
  /** Manifest `upstream` settings (timeouts). */
  upstream?: Record<string, unknown>;
  /** Manifest `server` settings (`cors`, client timeouts, connection caps, `drainTimeoutMs`); host and port are the test's own. */
  server?: Record<string, unknown>;
  /**
   * Config per plugin of the default chain (auth-guard → logger → metrics → response-store → rate-limit → budget →
   * pricing → account → provider-router), e.g. `{ budget: { timeZone: 'Asia/Tokyo' } }`. A plugin
   * mapped to `false` is left out of the chain.
   */
  config?: Partial<Record<ChainPlugin, Record<string, unknown> | false>>;
  dataDir?: string;
  /** Wall clock for the plugins (budgets, rate limits); default the real one. */
  clock?: Clock;
  /** Options for the created user (budget, limits); default an unlimited user. */
  user?: Omit<UserFields, 'name'>;
  /** Manifest `coordination` (a Redis shared by replicas); default none. */
  coordination?: Record<string, unknown>;
  /** Manifest `portal` (the self-service portal, docs/portal.md); default off. */
  portal?: Record<string, unknown>;
  /** Manifest `tracing` (OpenTelemetry traces); default none, so off. */
  tracing?: Record<string, unknown>;
  /** More environment for the gateway (`OTEL_*`); the test's process environment is never read. */
  env?: Record<string, string>;
  /** A PostgreSQL database of the test's own (`TOLLGATE_DATABASE_URL`); default the run's store (`test-store.ts`). */
  databaseUrl?: string;
}

/** The plugins of the default chain, in order, before the router. */
export const CHAIN = ['auth-guard', 'logger', 'metrics', 'response-store', 'rate-limit', 'budget', 'pricing', 'account'] as const;
export type ChainPlugin = (typeof CHAIN)[number];

/** A clock tests move by hand: `clock()` reads it, `clock.set(ms)` / `clock.advance(ms)` move it. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

export function manualClock(startMs: number): ManualClock {
  let now = startMs;
  const clock = (() => now) as ManualClock;
  clock.set = (ms) => (now = ms);
  clock.advance = (ms) => (now += ms);
  return clock;
}

export interface TestGateway {
  readonly gateway: RunningGateway;
  /** `openai` SDK client with the user's key, `maxRetries: 0`. */
  readonly client: OpenAI;
  readonly apiKey: string;
  readonly userId: number;
  readonly keyId: number;
  readonly dataDir: string;
  /** Server log lines (JSON), for asserting what was (not) logged. */
  readonly serverLog: string[];
  /**
   * POSTs `body` as JSON to `/api/v1<path>` with the user's key (and `anthropic-version`, so every
   * dialect's route takes it); resolves with the status, the body text and the request id.
   */
  post(path: string, body: unknown): Promise<{ status: number; text: string; requestId: string }>;
  /** Waits for the background logger to write the row of `requestId` (up to 30 s: a liveness bound, for a busy machine). */
  logRow(requestId: string): Promise<LogRow>;
  /** Waits (up to 30 s) until the log holds at least `count` rows whose requested model is `model`; all of them, oldest first. */
  logRowsOf(model: string, count: number): Promise<LogRow[]>;
  close(): Promise<void>;
}

let users = 0;

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const manifest = validateManifest(
    {
      upstream: options.upstream ?? {},
      ...(options.server ? { server: options.server } : {}),
      ...(options.admin ? { admin: options.admin } : {}),
      ...(options.coordination ? { coordination: options.coordination } : {}),
      ...(options.tracing ? { tracing: options.tracing } : {}),
      ...(options.portal ? { portal: options.portal } : {}),
      plugins: [
        ...CHAIN.filter((name) => options.config?.[name] !== false).map((name) => ({
          name,
          config: { ...(name === 'logger' ? { flushIntervalMs: 20 } : {}), ...(options.config?.[name] || {}) },
        })),
        { name: 'provider-router', config: { providers: options.providers, ...options.router } },
      ],
    },
    pluginRegistry,
    { env: {} },
  );
  const dataDir = options.dataDir ?? tempDir();
  const serverLog: string[] = [];
  const gateway = await startGateway({
    manifest, registry: pluginRegistry, dataDir, port: 0, host: '127.0.0.1',
    env: { ...options.env, TOLLGATE_ADMIN_PASSWORD: 'test admin password', ...(options.databaseUrl ? { TOLLGATE_DATABASE_URL: options.databaseUrl } : await testStoreEnv(dataDir)) },
    log: createLog('debug', (line) => serverLog.push(line)),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const user = await createGatewayUser(gateway.store.db, { ...options.user, name: `test-user-${process.pid}-${++users}` });
  const key = await createApiKey(gateway.store.db, { gatewayUserId: user.id, name: 'test' });
  const client = new OpenAI({ apiKey: key.key, baseURL: `${gateway.origin}/api/v1`, maxRetries: 0 });
  return {
    gateway, client, apiKey: key.key, userId: user.id, keyId: key.id, dataDir, serverLog,
    async post(path, body) {
      const res = await fetch(`${gateway.origin}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id')! };
    },
    async logRow(requestId) {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const row = await gateway.store.db.selectFrom('llm_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst();
        if (row) return row;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no llm_requests row for ${requestId}`);
    },
    async logRowsOf(model, count) {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const rows = await gateway.store.db.selectFrom('llm_requests').selectAll().where('model_requested', '=', model).orderBy('id').execute();
        if (rows.length >= count) return rows;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`fewer than ${count} llm_requests rows for ${model}`);
    },
    close: () => gateway.close(),
  };
}
