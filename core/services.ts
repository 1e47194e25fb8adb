/**
 * Services plugins offer each other and the admin API at run time: pricing offers its price book to
 * budget and the router, budget and rate-limit offer their state to the account endpoint and the
 * admin API, the router its providers, ... Every service's interface is declared here, in
 * `GatewayServices`, so a consumer (another plugin, `core/admin/`, the CLI) depends on the interface
 * and never on the file of the plugin that implements it.
 *
 * A plugin `provide`s in its factory; others `get` in their hooks (plugins are created in manifest
 * order, so a service from a later plugin does not exist yet while an earlier one is created).
 * A service that is absent means that plugin is not in the manifest; callers must cope.
 */
import type { TokenCounts } from './canonical/chat-types.ts';
import type { Principal, RequestCost } from './exchange.ts';
import type { BudgetPeriod } from './store/db-types.ts';
import type { ModelPrice } from './money/price-table.ts';
import type { BudgetWindow } from './money/calendar-period.ts';
import type { WriteBehind } from './request-log/write-behind.ts';

/** Every service by name, with its interface. */
export interface GatewayServices {
  /** The price book (pricing plugin). */
  pricing: PriceBook;
  /** Users' budgets (budget plugin). */
  budget: BudgetService;
  /** Callers' rate limits (rate-limit plugin). */
  rateLimit: RateLimitService;
  /** The request log's queue (logger plugin). */
  requestLog: RequestLogService;
  /**
   * The write-behind queue (`write-behind.ts`; the logger plugin creates it): log rows and spends,
   * persisted together in batched transactions.
   */
  writeBehind: WriteBehind;
  /** The configured providers (provider-router plugin). */
  providers: ProvidersService;
  /** Test tickets for API keys (auth-guard plugin). */
  authGuard: AuthGuardService;
  /** Circuit breakers and key pools of the upstreams (provider-router plugin). */
  upstreamHealth: UpstreamHealthService;
}

export interface ServiceRegistry {
  /** Offers `service` under `name`. Throws if the name is taken (two plugins of one kind). */
  provide<K extends keyof GatewayServices>(name: K, service: GatewayServices[K]): void;
  /** The service, or undefined when no plugin in the manifest offers it. */
  get<K extends keyof GatewayServices>(name: K): GatewayServices[K] | undefined;
}

/** An empty registry; the gateway makes one per boot and hands it to every plugin and the admin API. */
export function createServiceRegistry(): ServiceRegistry {
  const services = new Map<PropertyKey, unknown>();
  return {
    provide(name, service) {
      if (services.has(name)) throw new Error(`service "${String(name)}" is provided twice`);
      services.set(name, service);
    },
    get(name) {
      return services.get(name) as GatewayServices[typeof name] | undefined;
    },
  };
}

/**
 * `pricing`: the price of a model and the cost of a request. Prices are USD per million tokens (what
 * providers publish); costs are integer nano-USD (`RequestCost`).
 */
export interface PriceBook {
  /** The price of `model` served by provider `provider` (ids without prefix), or null = unpriced. */
  priceFor(provider: string, model: string): ModelPrice | null;
  /**
   * Resolves once `priceFor(provider, model)` gives its final answer (the dataset's dated-name matcher
   * loads on first need); null when it already does. Without arguments: once every lookup does.
   * Never rejects.
   */
  ready(provider?: string, model?: string): Promise<void> | null;
  /** The cost of `usage` at `price`; a null price gives all zeros with `unpriced: true`. */
  costOf(price: ModelPrice | null, usage: TokenCounts): RequestCost;
  /**
   * Worst-case cost for a reservation: `promptTokens` at the input rate + `maxOutputTokens` at the output rate. 0 when unpriced.
   * (When the cache-write rate is above the input rate, prompt tokens are taken at the cache-write rate: an upper bound.)
   */
  maxCostNanos(price: ModelPrice | null, promptTokens: number, maxOutputTokens: number): number;
  /** Every stored price (rows with a null model never appear), sorted by model. */
  list(): ModelPrice[];
  /** Gateway provider id → the price dataset's provider id (config `datasetProviders`), for imports. */
  readonly datasetProviders: Readonly<Record<string, string>>;
  /** Forgets cached prices; call after writing `model_pricing`. */
  invalidate(): void;
}

/** One user's budget as of now. Amounts are integer nano-USD. */
export interface BudgetStatus {
  /** null = unlimited. */
  limitNanos: number | null;
  period: BudgetPeriod;
  spentNanos: number;
  reservedNanos: number;
  /** limit − spent − reserved, never below 0; null when unlimited. */
  remainingNanos: number | null;
  /** The current period's window (`calendar-period.ts`). */
  window: BudgetWindow;
}

/** `budget`: a user's budget now, for `GET /api/account` and the admin UI, and a way to see a limit changed in this process. */
export interface BudgetService {
  /** IANA timezone the periods are aligned in. */
  readonly timeZone: string;
  /**
   * The user's budget now (amounts in nano-USD), for the account and admin views: in one process the
   * period's spend (as stored plus this process's settlements) and its reservations; shared by
   * replicas the counts in Redis (every replica's spend and live reservations), this replica's own
   * while Redis cannot answer. Undefined for an unknown user. Waits to load a user not yet read and,
   * shared by replicas, for Redis.
   */
  status(userId: number): Promise<BudgetStatus | undefined>;
  /** A team's budget now (schema v23), as `status` for a user; undefined for an unknown team. */
  teamStatus(teamId: number): Promise<BudgetStatus | undefined>;
  /** Re-reads a user's budget settings after an in-process change (all users when omitted); resolves once re-read. */
  invalidate(userId?: number): void | Promise<void>;
  /** Re-reads a team's budget settings (all teams when omitted); resolves once re-read. */
  invalidateTeam(teamId?: number): void | Promise<void>;
}

/** One rate limit's state; the same figures as the `x-ratelimit-*` headers. */
export interface LimitState {
  /** Requests or tokens per minute. */
  limit: number;
  remaining: number;
  /** Ms until the limit is fully replenished (0 = full now). */
  resetMs: number;
}

/** `rateLimit`: a caller's current limits, for `GET /api/account` and the admin UI. */
export interface RateLimitService {
  /**
   * The effective limits for this caller (user limits, or the tighter key limits); null = no such
   * limit, or its state is unknown (the shared counters are unreachable).
   */
  statusOf(principal: Principal): Promise<{ requests: LimitState | null; tokens: LimitState | null }>;
}

/**
 * `requestLog`: the request log's in-memory queue (the write-behind queue: log rows and spends),
 * flushed before reading `llm_requests`, `usage_rollups` or spends.
 */
export interface RequestLogService {
  /**
   * Writes what is queued now; returns the number of writes done. On SQLite synchronously; on
   * PostgreSQL a promise: await it before reading (awaiting a plain number is harmless).
   */
  flush(): number | Promise<number>;
  /** Writes waiting in memory. */
  depth(): number;
  /** The queue's health (`GET /readyz`): writes waiting, dropped since start, and whether the database refuses them now. */
  status?(): { queued: number; dropped: number; failing: boolean };
}

/** The outcome of a credential test, as `POST /admin/api/users/:id/credentials/:provider/test` shows it. */
export interface CredentialTestResult {
  /** True when the provider listed its models with the credential. */
  ok: boolean;
  /** 200 on success; the gateway's status for the failure (the upstream's 4xx, 502, 504); null when nothing answered. */
  status: number | null;
  /** Time the listing took, ms. */
  latency_ms: number;
  /** How many models the provider listed; null on failure. */
  models: number | null;
  error: { message: string; type: string; code: string } | null;
}

/** One provider's outcome of `ProvidersService.syncCatalog`, as `tollgate models sync` prints it. */
export interface CatalogSyncResult {
  provider: string;
  /** How many models the provider listed (and were stored); null on failure. */
  models: number | null;
  /** Why nothing was stored; null on success. */
  error: string | null;
}

/**
 * One configured provider as the start banner and the admin UI show it. `sharedKey`: `configured`
 * when the manifest gives it a shared key (or a pool), so every user can call it; `missing` when it
 * needs a key and has none, so only users with their own credential can; `not_needed` for one that
 * runs without a key (a local Ollama).
 */
export interface ProviderSummary {
  id: string;
  name: string;
  sharedKey: 'configured' | 'missing' | 'not_needed';
}

/** `providers`: the configured providers, for the admin API and the CLI. */
export interface ProvidersService {
  /** Configured providers, in manifest order. */
  list(): ProviderSummary[];
  /**
   * Lists the provider's models with this user's own credential (not the shared one) and reports.
   * Throws 404 `provider_not_found` for an unknown provider and 404 `credential_not_found` when the
   * user has no credential of their own for it.
   */
  testCredential(gatewayUserId: number, provider: string): Promise<CredentialTestResult>;
  /** Forgets cached credentials of a user (all users when omitted), after an admin write. */
  invalidateCredentials(gatewayUserId?: number): void;
  /**
   * Fetches the model list of every provider (or only `providerId`) now, with its shared credential,
   * and replaces its list in the persisted catalog (`model-catalog-store.ts`), one provider after the
   * other in manifest order. A provider without a shared credential, or whose listing fails, is
   * reported in its result, never thrown. Throws 404 `provider_not_found` for an unknown `providerId`.
   */
  syncCatalog(providerId?: string): Promise<CatalogSyncResult[]>;
  /**
   * The entries of `GET /api/v1/models` that user `gatewayUserId` may call with a key whose allow-list
   * is `patterns` (null: every model): the shared catalog plus their own credentials' lists, as the
   * models list shows them (`id` is `provider/model` or a manifest model name). The portal's model list.
   */
  allowedModels(gatewayUserId: number, patterns: readonly string[] | null, teamPatterns?: readonly string[] | null): Promise<AllowedModel[]>;
}

/** One entry of `ProvidersService.allowedModels` (the fields of a `GET /api/v1/models` entry the portal shows). */
export interface AllowedModel {
  id: string;
  owned_by: string;
  display_name: string;
}

/** Every test ticket starts with this, so auth-guard tells it from a key (`tg_…`) before hashing. */
export const TEST_TICKET_PREFIX = 'tgt_';

/** How long an issued test ticket can be redeemed, ms. */
export const TEST_TICKET_TTL_MS = 10_000;

/**
 * `authGuard`: single-use test tickets, so the admin API can make a real request as a key it never
 * sees (only the key's SHA-256 is stored).
 */
export interface AuthGuardService {
  /**
   * A random single-use ticket (`tgt_` + 43 base64url characters) that authenticates exactly as the
   * API key `apiKeyId` would (revoked → 401, expired → 401, disabled user → 403) for one request
   * within `TEST_TICKET_TTL_MS` of the gateway clock, without touching the key's `last_used_at`.
   * Null when no key has that id.
   */
  issueTestTicket(apiKeyId: number): Promise<string | null>;
}

/** Outcomes of the recent attempts (the last 5 minutes, at most the last 200) of a deployment or a pooled key. */
export interface RecentOutcomes {
  /** Attempts counted. */
  attempts: number;
  /** Failed attempts / attempts (0 when none): no answer, a 5xx, a 429, a refusal of the key itself; not an error the request caused (a 403 for a model the account may not use included). */
  error_rate: number;
  /** Median latency to the first byte (or to the error) of those attempts, whole ms; null when none. */
  p50_latency_ms: number | null;
}

/** The last failure of a deployment or key. */
export interface LastUpstreamError {
  /** ISO 8601 time. */
  at: string;
  /** The upstream's HTTP status; null when it did not answer. */
  status: number | null;
  /** The gateway's error code (`upstream_timeout`, `rate_limit_exceeded`, ...). */
  code: string;
}

/** One deployment (provider + upstream model) as the breaker sees it. */
export interface DeploymentHealth {
  /** `provider/model`. */
  deployment: string;
  provider: string;
  model: string;
  state: 'closed' | 'open' | 'half-open';
  /** When the cooldown of an open breaker ends (ISO 8601); null when closed. */
  open_until: string | null;
  recent: RecentOutcomes;
  last_error: LastUpstreamError | null;
}

/** One key of a provider's pool, named by its fingerprint (never the key itself). */
export interface PoolKeyHealth {
  provider: string;
  /** Fingerprint: `…` + the key's last 4 characters (or `#` + a hash prefix for a short key). */
  key: string;
  state: 'ok' | 'cooling' | 'disabled';
  /** When a cooling key is used again (ISO 8601); null otherwise. */
  cooling_until: string | null;
  /** The key's own per-minute limits from the manifest; null = none. */
  rpm: number | null;
  tpm: number | null;
  /** Requests and tokens it took in the last minute. */
  last_minute: { requests: number; tokens: number };
  recent: RecentOutcomes;
  last_error: LastUpstreamError | null;
}

export interface UpstreamHealthSnapshot {
  deployments: DeploymentHealth[];
  keys: PoolKeyHealth[];
}

/** `upstreamHealth`: breaker and key-pool state, for `GET /admin/api/upstream-health` and `/readyz`. */
export interface UpstreamHealthService {
  /** Every deployment the manifest's groups name or a request used, then every pooled key. */
  snapshot(this: void): UpstreamHealthSnapshot;
  /**
   * `GET /readyz`'s view: breaker state by `provider/model` (deployments of the manifest, or that
   * served once: never a model name a client made up), and per provider the count of pooled keys in
   * each state. Counts, not fingerprints: /readyz is public, and a fingerprint tells a stranger which
   * key is out of use (the admin API shows them).
   */
  readiness(this: void): { deployments: Record<string, DeploymentHealth['state']>; keys: Record<string, Record<PoolKeyHealth['state'], number>> };
  /**
   * Puts a disabled or cooling pooled key back into use. False when `provider` has no pooled key
   * with fingerprint `key`.
   */
  enableKey(this: void, provider: string, key: string): boolean;
}
