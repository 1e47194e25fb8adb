/**
 * The types of the public plugin SDK (`tollgate/plugin`, `core/sdk/index.ts`): what an operator's
 * plugin sees of the gateway. Each is a view of an internal type (`core/exchange.ts`,
 * `core/plugin.ts`), narrowed to what a plugin may read and change; `core/sdk/host.ts` checks at
 * compile time that the internal types satisfy them, so the gateway hands its own objects over
 * without copying. Whatever is not named here is not part of the promise and may change in any
 * release.
 *
 * Semver: within `apiVersion` 1, a minor release may add optional hooks, optional context members and
 * readable fields; removing or changing one is a new `apiVersion`.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../canonical/chat-types.ts';
import type { EmbeddingRequest } from '../canonical/embedding-types.ts';
import type { JsonSchema } from '../json-schema.ts';

export type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, ChatContentPart, ChatTool, ChatToolCall, Usage } from '../canonical/chat-types.ts';
export type { EmbeddingRequest } from '../canonical/embedding-types.ts';
export type { JsonSchema } from '../json-schema.ts';

/** A value that may be awaited; hooks may answer synchronously, which costs the request no microtask. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The request a model call carries, whatever the client's dialect: an OpenAI chat-completion-shaped
 * request, or an embeddings request (which has no `messages`).
 */
export type CanonicalRequest = ChatCompletionRequest | EmbeddingRequest;

/** Who is calling, once authentication ran. */
export interface Principal {
  readonly gatewayUserId: number;
  readonly gatewayUserName: string;
  readonly apiKeyId: number;
}

/** Where the request goes, once routing ran. */
export interface Target {
  /** Provider id as declared in the manifest (`openai`, `anthropic`, `azure`, ...). */
  readonly provider: string;
  /** The model id sent upstream, without the provider prefix. */
  readonly model: string;
}

/** Token counts of one answer (reported by the upstream, or counted locally: `usageEstimated`). */
export interface TokenCounts {
  /** Every prompt token, cache reads and writes included. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number;
  readonly cacheWriteTokens: number;
}

/** What a request cost, in integer nano-USD (1 USD = 1e9). */
export interface RequestCost {
  readonly totalNanos: number;
  readonly inputNanos: number;
  readonly cachedInputNanos: number;
  readonly cacheWriteNanos: number;
  readonly outputNanos: number;
  /** True when the model has no price: every figure is 0. */
  readonly unpriced: boolean;
}

/** The API surface the client speaks. */
export interface DialectInfo {
  /** `openai-chat`, `anthropic-messages`, `openai-responses`, `openai-embeddings`, ... */
  readonly id: string;
}

/** A value a plugin may add to the request's log row (`logField`): kept as JSON in `plugin_fields`. */
export type LogFieldValue = string | number | boolean | null;

/**
 * One request as a plugin sees it. Fields fill in as the request moves on: `principal` after
 * authentication, `request` once the body was read, `target` after routing, `usage`, `cost` and
 * `status` on the way back.
 */
export interface Exchange {
  /** `x-request-id` of the response, e.g. `req_6f1c...`. */
  readonly id: string;
  /** The endpoint's stable name: `chat.completions`, `messages.create`, `responses.create`, `embeddings.create`, `models.list`, ... */
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  /** The client's request headers, names lowercase. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Query-string parameters, the last value winning. */
  readonly query: Readonly<Record<string, string>>;
  /** Wall clock at arrival, ms since the epoch. */
  readonly startedAtMs: number;
  /** Aborted when the client left or the gateway gave up: pass it to any I/O a hook starts. */
  readonly signal: AbortSignal;
  /** The dialect of a model call; null on other endpoints (model lists, account). */
  readonly dialect: DialectInfo | null;
  /** The canonical request of a model call; null on other endpoints and before the body was read. */
  readonly request: Readonly<CanonicalRequest> | null;
  /**
   * The client's own validated body, in its dialect's shape (the Messages API's, the Responses API's);
   * null before the body was read. A native pass-through sends this body upstream, with the fields the
   * canonical `request` cannot carry (Anthropic's `document` blocks and `top_k`, the Responses API's
   * `include` and built-in tools); on OpenAI chat it is the canonical request itself. Read only.
   */
  readonly clientBody: Readonly<Record<string, unknown>> | null;
  /** True when the client asked for a streamed answer. */
  readonly stream: boolean;
  readonly principal: Principal | null;
  readonly target: Target | null;
  /** The model the upstream says it served. */
  readonly modelServed: string | null;
  readonly usage: TokenCounts | null;
  /** True when `usage` was counted locally, not reported by the upstream. */
  readonly usageEstimated: boolean;
  /** Set when the response ended (by the pricing plugin); null when nothing was billed. */
  readonly cost: RequestCost | null;
  /** The HTTP status sent, or being sent. */
  readonly status: number;
  /** `error.code` when the outcome is an error; null otherwise. */
  readonly errorCode: string | null;
  /** True when the client left before the response was complete. */
  readonly clientAborted: boolean;
  /** Headers to add to the response (lowercase names); written with the status line, so set them before `onResponseStart` returns. */
  readonly responseHeaders: Record<string, string>;
  /** Fields plugins added to this request's log row (`logField`); null when none. */
  readonly logFields: Readonly<Record<string, LogFieldValue>> | null;
}

/**
 * A locally produced answer (see `reply` and `replyAnswer`): a JSON body with a status and headers, or
 * a canonical chat answer (`answer`) the gateway renders in the client's dialect, streamed or not.
 */
export interface Reply {
  readonly kind: 'reply';
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  answer?: ChatCompletion;
}

/**
 * The error a hook throws to refuse a request (see `gatewayError`): the client gets `status` and a body
 * in its own dialect's shape naming `code` and `message`.
 */
export interface GatewayErrorLike extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
}

/**
 * One streamed chunk in the canonical (OpenAI chat-completion chunk) shape, as every chat dialect's
 * stream is seen by `onResponseChunk`.
 */
export type StreamChunk = ChatCompletionChunk;

/**
 * The hooks of a plugin instance, every one optional. When each runs, what it may change and what it
 * costs: `docs/plugins.md`. Request hooks run in manifest order, response hooks in reverse, and only
 * for plugins whose request hook ran (the onion rule). A hook that throws anything but a
 * `gatewayError`, or takes longer than the entry's `hookTimeoutMs`, fails the request with 500
 * `plugin_error` (or is logged, on the response path) and never stops the gateway.
 */
export interface Plugin<S = void> {
  /** Per-request private state, made the first time one of this plugin's hooks runs for a request. */
  createState?(ex: Exchange): S;
  /** Before the body is read: take what must be held while it is read. Throw a `gatewayError` to refuse. */
  beforeBody?(ex: Exchange, state: S): MaybePromise<void>;
  /** With the parsed request: check, refuse (throw a `gatewayError`) or answer locally (return a `Reply`). */
  onRequest?(ex: Exchange, state: S): MaybePromise<void | Reply>;
  /** The request failed (`error` decided); observational. */
  onError?(ex: Exchange, state: S, error: GatewayErrorLike): void;
  /** Status known, headers not sent: add to `ex.responseHeaders`. Synchronous. */
  onResponseStart?(ex: Exchange, state: S): void;
  /** Each canonical stream chunk before it is written; synchronous, must not change it. */
  onResponseChunk?(ex: Exchange, state: S, chunk: StreamChunk): void;
  /** Exactly once, after the last byte was written or the client left: count, record, release. */
  onResponseEnd?(ex: Exchange, state: S): MaybePromise<void>;
  /**
   * The whole answer of a chat call that completed (status 200, not cut, the client still there), in
   * the canonical shape (OpenAI's `chat.completion`; a stream's chunks joined), whatever the client's
   * dialect, streamed or not, translated or passed through natively; just before `onResponseEnd`.
   * A local answer (`replyAnswer`) does not come here. Defining this hook makes the gateway keep each
   * answer whole while it streams.
   */
  onAnswer?(ex: Exchange, state: S, answer: ChatCompletion): MaybePromise<void>;
  /**
   * Rewrites each text of the request before it is routed: message contents and text parts (every
   * role), system prompts and instructions, tool results; never ids, tool-call arguments or opaque
   * blocks. Runs after every plugin's `onRequest`, in manifest order, once per text of the canonical
   * request and once per text of the client's own body (what a native pass-through forwards): so it
   * must give the same output for the same input. Return the text unchanged to keep it. Synchronous;
   * throw a `gatewayError` to refuse the request.
   */
  rewriteRequestText?(ex: Exchange, state: S, text: string): string;
  /**
   * Rewrites the answer's text on its way to the client, in every dialect, streamed or not: called
   * with each piece of choice `choiceIndex`'s text in order (a stream's text deltas as they come; a
   * whole answer's text at once), then once with `end` true and `''` when that choice's text is
   * complete. Return what to send in the piece's place: `''` holds it back (to release it, in full or
   * redacted, with a later piece or at `end`), so a rule can wait until it can decide. Synchronous;
   * throw a `gatewayError` to stop the answer (before its headers: that error; in a stream already
   * started: the stream ends with it as its error event). Defining this hook makes the gateway render
   * answers it would pass through natively from their decoded form (fields of the provider's own that
   * the canonical form does not carry are not relayed then).
   */
  rewriteAnswerText?(ex: Exchange, state: S, text: string, end: boolean, choiceIndex: number): string;
  /** At shutdown, after in-flight requests drained. */
  close?(): MaybePromise<void>;
}

/** Writes one JSON line to the gateway's log; never pass keys, credentials or request bodies. */
export interface PluginLog {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A Prometheus counter the plugin registered (`PluginMetrics.counter`). */
export interface Counter {
  inc(labels?: Readonly<Record<string, string>>, value?: number): void;
}

/** A Prometheus histogram (`PluginMetrics.histogram`); values in the unit its name says. */
export interface Histogram {
  observe(labels: Readonly<Record<string, string>>, value: number): void;
}

/** A Prometheus gauge (`PluginMetrics.gauge`). */
export interface Gauge {
  set(labels: Readonly<Record<string, string>>, value: number): void;
}

/** What `PluginMetrics` makes: the name (`snake_case`, with its unit: `_seconds`, `_total`), help and label names. */
export interface MetricSpec {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/**
 * Metrics served at `GET /metrics` beside the gateway's own. Every name gets the prefix
 * `tollgate_plugin_<plugin name, - as _>_`, so plugins never collide with each other or the gateway.
 */
export interface PluginMetrics {
  counter(spec: MetricSpec): Counter;
  histogram(spec: MetricSpec & { buckets?: readonly number[] }): Histogram;
  gauge(spec: MetricSpec): Gauge;
}

/** Options of a plugin's key-value store. */
export interface KvOptions {
  /**
   * Bytes (keys + values, UTF-8) the plugin's entries may take in all; setting past it evicts the
   * oldest-written entries first. A positive whole number; default 64 MiB.
   */
  maxBytes?: number;
}

/**
 * A key-value store of the plugin's own, shared by every replica: in the gateway's database (SQLite
 * in one process, PostgreSQL for replicas), or in Redis when the manifest's `coordination` names one.
 * Keys are the plugin's own (no other plugin sees them). Values are strings (serialize JSON yourself)
 * up to 8 MiB; keys up to 512 characters.
 *
 * Limits, checked before anything is written (a call outside them rejects with a `TypeError` or
 * `RangeError` naming the plugin, the key and the limit): a key is a non-empty string of at most 512
 * characters without NUL; a value is a string of at most 8 MiB in UTF-8; key and value together
 * fit the store's `maxBytes`; `ttlMs` is a positive number of ms (a fraction is rounded up).
 *
 * Every call may fail when the database or Redis is unreachable: a plugin decides what that means
 * for its request (a cache treats it as a miss). On the request path, catch the rejection: a hook
 * that lets it through fails its request with 500 `plugin_error`.
 */
export interface PluginKv {
  /** The value set for `key`, or null when there is none (never set, deleted, expired or evicted). */
  get(key: string): Promise<string | null>;
  /**
   * Sets `key` to `value`, replacing any value and TTL it had; the entry then counts as the newest
   * written. When the plugin's entries would take more than `maxBytes`, its oldest-written others are
   * evicted first.
   * `ttlMs`: the entry expires that long after it was set (absent: never, until evicted).
   */
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<void>;
  /** Removes `key`; resolves also when there was none. */
  delete(key: string): Promise<void>;
}

/** What a plugin gets when it is created (once, at start). */
export interface PluginContext {
  /** This plugin's name (its log lines and metrics carry it). */
  readonly name: string;
  readonly log: PluginLog;
  /** Wall-clock time, ms since the epoch; read it here, never `Date.now()`, so tests can set the time. */
  readonly clock: () => number;
  readonly metrics: PluginMetrics;
  /** The gateway's data directory (absolute), for a plugin that keeps files of its own. */
  readonly dataDir: string;
  /**
   * The plugin's key-value store (`PluginKv`: where it lives, its limits, its failures). Call it once,
   * in `create`; a second call returns the same store, the first call's options applying. Throws a
   * `RangeError` when `options.maxBytes` is not a positive whole number.
   */
  kv(options?: KvOptions): PluginKv;
}

/**
 * Where the plugin must sit in the manifest relative to another, when both are listed; checked when the
 * manifest loads, with `why` shown to the operator who breaks it.
 */
export interface OrderRule {
  relation: 'after' | 'before';
  plugin: string;
  why: string;
}

/** A problem `checkConfig` found: where in the plugin's config (a JSON pointer) and what. */
export interface ConfigProblem {
  pointer: string;
  message: string;
}

/** A plugin kind, as `definePlugin` takes it. */
export interface PluginDefinition<C = Record<string, unknown>, S = unknown> {
  /** Unique among the manifest's plugins: lowercase letters, digits and `-` (`acme-header`). */
  readonly name: string;
  /** The plugin's own version (semver), shown by `tollgate plugins list`. */
  readonly version?: string;
  readonly description: string;
  /**
   * JSON Schema (draft-07) of the manifest entry's `config`, validated when the manifest loads (at
   * `serve` and in `tollgate check`) with defaults filled in; describe every field.
   */
  readonly configSchema: JsonSchema;
  /** Rules the schema cannot state; MUST NOT throw or do I/O. */
  checkConfig?(this: void, config: C): readonly ConfigProblem[];
  readonly order?: readonly OrderRule[];
  /** Creates the instance, once at start, with the config its schema accepted. */
  create(config: C, ctx: PluginContext): MaybePromise<Plugin<S>>;
}

/** What `definePlugin` returns: the definition marked with the SDK version it was written for. */
export type DefinedPlugin<C = Record<string, unknown>, S = unknown> = PluginDefinition<C, S> & { readonly apiVersion: 1 };
