/**
 * The plugin contract. A plugin is a named object whose optional hooks the pipeline calls in a fixed
 * order; the manifest lists plugins in the order they run. Rules:
 *
 * Request phases run in manifest order, each plugin once. The request body is read and parsed when
 * the pipeline passes the leading run of `headersOnly` plugins (before that, `ex.request` is null):
 * - `beforeBody(ex, state)`: for the plugins after that run, in manifest order, just before the body
 *   is read (only for an exchange with a body). MAY take what must be held while a body is read (a
 *   concurrency slot: a caller over its limit is refused before its 32 MiB are read). MUST NOT read
 *   `ex.request`. To deny, throw a `GatewayError`. A plugin whose `beforeBody` returned is entered
 *   (below) even if the body or an earlier plugin's `onRequest` then fails, so its `onResponseEnd`
 *   gives back what it took.
 * - `onRequest(ex, state)`: authenticate, check limits, reserve. MAY read the parsed request and the
 *   slots earlier plugins filled, set slots it owns (`principal`, ...), add response headers to
 *   `ex.responseHeaders`. To deny, throw a `GatewayError` from `core/errors.ts`. To answer locally,
 *   return a `Reply`. Either way no later request hook runs. MUST NOT write to the HTTP response.
 * - `route(ex, state)`: exactly one plugin implements it (the provider router, listed last). It picks
 *   provider, model and credential, sets `ex.target`, and returns the call to dispatch (`ModelCall`: chat or embeddings), or a
 *   `Reply` for endpoints it answers itself (model lists).
 * - `beforeUpstream(ex, state, call)`: last look at the call before dispatch. MAY return a replacement
 *   (e.g. `call.withOutputCap(n)`), which later plugins and the dispatch then get.
 *
 * A plugin is *entered* once its request hook returned normally (a plugin without one is entered when
 * the pipeline passes it). The plugin that denies is not entered. Response phases run in reverse
 * manifest order, for entered plugins only (the onion rule: the first plugin is outermost and sees the
 * final outcome, denials included):
 * - `onError(ex, state, error)`: observational; the error is already decided.
 * - `onResponseStart(ex, state)`: status known (`ex.status`), headers not sent yet; MAY add headers.
 * - `onResponseChunk(ex, state, chunk)`: synchronous, once per canonical stream chunk, before the chunk
 *   is written. MUST NOT block or throw; MAY read `chunk` but MUST NOT mutate it.
 * - `onResponseComplete(ex, state, final)`: at most once, when the answer completed, BEFORE its last
 *   bytes are written: `final` is the answer object as the client receives it, in its dialect (for a
 *   stream, the object its terminal event carries; on native pass-through, the upstream's own). Only
 *   dialects whose answers are such an object give one (the Responses API's `response`); others never
 *   run this hook, nor does a failed answer. MAY return a Promise, awaited before the last bytes (so a
 *   client acting on them finds what the hook recorded); MUST NOT mutate `final`. A failure is logged,
 *   never sent.
 * - `onAnswer(ex, state, answer)`: the whole canonical answer of a chat call that completed, just
 *   before `onResponseEnd` (see the hook's TSDoc).
 * - `onResponseEnd(ex, state)`: exactly once, after the last byte was written or the client left.
 *   Settle, count, log. Errors here are logged, never sent (the response is gone).
 *
 * Per-exchange state: `createState(ex)` runs lazily, once per exchange, the first time a hook of that
 * plugin runs; the value is passed to every later hook of the same plugin for that exchange.
 */
import type { ChatCompletion, ChatCompletionChunk } from './canonical/chat-types.ts';
import type { Exchange } from './exchange.ts';
import type { ModelCall } from './upstream/upstream-call.ts';
import type { GatewayError } from './errors.ts';
import type { Store } from './store/store.ts';
import type { Log } from './runtime/log.ts';
import type { JsonSchema } from './json-schema.ts';
import type { UpstreamClient } from './upstream/upstream-client.ts';
import type { KeyringSource } from './store/data-dir.ts';
import type { Clock } from './runtime/clock.ts';
import type { ServiceRegistry } from './services.ts';
import type { TokenEstimator } from './tokens/token-estimate.ts';
import type { MetricsRegistry } from './runtime/metrics.ts';
import type { RouteDeclaration } from './routes.ts';
import type { RateCounters } from './coordination/rate-counters.ts';
import type { Leases } from './coordination/leases.ts';
import type { BudgetCounters } from './coordination/budget-counters.ts';
import type { PluginKvEngine } from './store/plugin-kv.ts';
import type { MaybePromise } from './runtime/maybe-promise.ts';

/**
 * A locally produced answer: JSON body (serialized by the core) with a status and headers; or, with
 * `answer`, a canonical chat answer the core renders in the client's dialect, streamed when the client
 * asked for a stream (status 200; `body` unused).
 */
export interface Reply {
  readonly kind: 'reply';
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  answer?: ChatCompletion;
}

/** Builds a `Reply`; prefer this to object literals so the pipeline can tell replies from calls. */
export function reply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers === undefined ? { kind: 'reply', status, body } : { kind: 'reply', status, body, headers };
}

export interface Plugin<S = void> {
  readonly name: string;
  /**
   * True when `onRequest` needs only the headers (authentication). The leading run of such plugins
   * runs before the request body is read, so a stranger is refused before the gateway reads, say, a
   * 32 MiB body; the body is parsed when the pipeline passes the first plugin without this flag.
   */
  readonly headersOnly?: boolean;
  createState?(ex: Exchange): S;
  beforeBody?(ex: Exchange, state: S): MaybePromise<void>;
  onRequest?(ex: Exchange, state: S): MaybePromise<void | Reply>;
  route?(ex: Exchange, state: S): MaybePromise<ModelCall | Reply>;
  beforeUpstream?(ex: Exchange, state: S, call: ModelCall): MaybePromise<void | ModelCall>;
  onError?(ex: Exchange, state: S, error: GatewayError): void;
  onResponseStart?(ex: Exchange, state: S): void;
  onResponseChunk?(ex: Exchange, state: S, chunk: ChatCompletionChunk): void;
  onResponseComplete?(ex: Exchange, state: S, final: unknown): MaybePromise<void>;
  onResponseEnd?(ex: Exchange, state: S): MaybePromise<void>;
  /**
   * The whole canonical answer of a chat call that completed (status 200, not cut, the client still
   * there), streamed or not, translated or native; just before `onResponseEnd`. Kept only when a
   * plugin has this hook (joining a stream's chunks costs).
   */
  onAnswer?(ex: Exchange, state: S, answer: ChatCompletion): MaybePromise<void>;
  /** Called once at shutdown, in reverse manifest order, after in-flight exchanges drained. */
  close?(): MaybePromise<void>;
}

/** What a plugin factory gets at boot. Everything here is ready and frozen. */
export interface PluginContext {
  readonly store: Store;
  readonly log: Log;
  /** Absolute data directory (holds `tollgate.db`, `secret.key`). */
  readonly dataDir: string;
  /** The shared upstream HTTP client (keep-alive pools, timeouts from the manifest). */
  readonly upstream: UpstreamClient;
  /** The master keys that open stored provider credentials. */
  readonly keyring: KeyringSource;
  /** Wall-clock time; read it here, never `Date.now()`, so tests can set the time. */
  readonly clock: Clock;
  /** Services plugins offer each other (`core/services.ts`). */
  readonly services: ServiceRegistry;
  /** Local token counts (`core/tokens/token-estimate.ts`). */
  readonly tokens: TokenEstimator;
  /** The Prometheus registry served at `GET /metrics`. */
  readonly metrics: MetricsRegistry;
  /**
   * Where rate-limit counters live: in this process, or shared by every replica in Redis, as the
   * manifest's `coordination` section says (`rate-counters.ts`).
   */
  readonly rateCounters: RateCounters;
  /**
   * Where budget spend and reservations are shared by every replica (Redis), as the manifest's
   * `coordination` section says (`budget-counters.ts`); null in one process, where the budget
   * plugin's own in-memory ledger is exact.
   */
  readonly budgetCounters: BudgetCounters | null;
  /** Leases for periodic work one replica does for all (`leases.ts`): always granted in one process. */
  readonly leases: Leases;
  /**
   * Where the key-value stores of SDK plugins live (`ctx.kv()`, `core/sdk/kv.ts`): Redis when the
   * manifest's `coordination` names one, else the store's database (`store/plugin-kv.ts`). The
   * SDK's host hands each plugin its own view; built-in plugins keep their data in their own tables.
   */
  readonly pluginKv: PluginKvEngine;
}

/**
 * Where a plugin must sit in the manifest relative to others, when both are listed. Checked when the
 * manifest loads; each rule carries the reason shown to the operator who breaks it.
 */
export interface OrderRule {
  /** `after`: this plugin must come after `plugin`; `before`: before it. */
  relation: 'after' | 'before';
  plugin: string;
  /** Why, in words an operator understands ("on the way back pricing must set the cost before budget settles it"). */
  why: string;
}

/**
 * A plugin kind as registered in the plugin registry: its config schema (validated at boot, every field
 * described), the endpoints it answers, its order rules, and a factory. `create` may be async (open
 * statements, load caches) and MUST NOT fail on a config its schema accepted.
 *
 * A plugin answers its declared `routes` itself: in `onRequest` (or in `route`, for the terminal
 * plugin) it returns a `Reply` when `ex.operation` is one of its operations. An endpoint whose plugin
 * is not in the manifest does not exist (404).
 */
export interface PluginFactory<C = unknown> {
  readonly name: string;
  readonly description: string;
  readonly configSchema: JsonSchema;
  /** True for the routing plugin (implements `route`): exactly one is listed, last. */
  readonly terminal?: boolean;
  /** Set for a plugin that must be listed first: why, in an operator's words. */
  readonly first?: { why: string };
  /** The `/api` endpoints this plugin answers; the server routes them and the OpenAPI document lists them. */
  readonly routes?: readonly RouteDeclaration[];
  readonly order?: readonly OrderRule[];
  /**
   * Rules between fields that the schema cannot state (a model group naming a provider the config
   * does not define). Called when the manifest loads (`tollgate check`, start), only for a config its
   * schema accepted; the problems are reported with the manifest's others. Each `pointer` is a JSON
   * pointer into the config (`/models/fast/deployments/0/provider`). MUST NOT throw or do I/O.
   */
  checkConfig?(this: void, config: C): readonly ConfigProblem[];
  /** `entry` is what the plugin's manifest entry says besides its config (`core/manifest.ts` `PluginEntry`). */
  create(config: C, ctx: PluginContext, entry?: PluginEntrySettings): MaybePromise<Plugin<unknown>>;
}

/** What a manifest entry says of its plugin besides its config. */
export interface PluginEntrySettings {
  /** How long a hook of a plugin written on the SDK may take, ms (`core/sdk/host.ts`). */
  readonly hookTimeoutMs?: number;
}

/** A problem `PluginFactory.checkConfig` found: where in the plugin's config (a JSON pointer) and what. */
export interface ConfigProblem {
  pointer: string;
  message: string;
}

/**
 * Declares a plugin kind with its own config type. The manifest validates each plugin's config
 * against `configSchema` before `create` runs, which is what makes the narrowing from the registry's
 * `unknown` to `C` sound; this is the one place it happens.
 */
export function definePlugin<C>(factory: PluginFactory<C>): PluginFactory {
  const { checkConfig } = factory;
  return {
    ...factory,
    ...(checkConfig ? { checkConfig: (config: unknown) => checkConfig(config as C) } : {}),
    create: (config: unknown, ctx: PluginContext, entry?: PluginEntrySettings) => factory.create(config as C, ctx, entry),
  };
}
