/**
 * One request's shared record, built by `core/server.ts` and passed to every hook. Typed slots are
 * filled by the plugin that owns them (see each field); `states` holds each plugin's private state.
 */
import type { AbortSource } from './http/exchange-abort.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, TokenCounts, Usage } from './canonical/chat-types.ts';
import type { CanonicalRequest } from './canonical/canonical-request.ts';
import type { ModelPrice } from './money/price-table.ts';
import type { Dialect } from './dialects/dialect.ts';
import type { GatewayError } from './errors.ts';
import type { PromptTokenRules } from './tokens/prompt-token-rules.ts';

/**
 * A gateway operation: the stable name a route declares (`chat.completions`, `models.list`,
 * `account.get`, ...). Dialects declare the model calls (`core/dialects/`), plugins their own endpoints.
 * It labels metrics and lets a plugin recognise the endpoint it answers.
 */
export type Operation = string;

/** Who is calling: set by auth-guard. */
export interface Principal {
  gatewayUserId: number;
  gatewayUserName: string;
  apiKeyId: number;
  /** Requests/tokens per minute for this user; null = the manifest default applies. */
  rpm: number | null;
  tpm: number | null;
  /** Limits of this API key, applied on top of the user's; null = none. */
  keyRpm: number | null;
  keyTpm: number | null;
  /**
   * The models this API key may call, as glob patterns (`openai/*`, `claude-*`, a group name);
   * null or absent = every model. Checked by the router against the requested name.
   */
  models?: readonly string[] | null;
  /** Requests in flight at once for this user; null or absent = the manifest default applies. */
  maxConcurrent?: number | null;
  /** The key's tags as stored (canonical JSON, `core/accounts/key-tags.ts`), copied onto the log row; null or absent = none. */
  keyTags?: string | null;
  /**
   * The user's team (schema v23), whose budget, limits and allow-list apply on top of the user's and
   * the key's; null or absent = none.
   */
  team?: PrincipalTeam | null;
}

/** A principal's team as the request path sees it (`teams` row; null limits = no team limit). */
export interface PrincipalTeam {
  id: number;
  name: string;
  rpm: number | null;
  tpm: number | null;
  maxConcurrent: number | null;
  /** Glob patterns as a key's `models`; null = every model. */
  models: readonly string[] | null;
}

/**
 * What a request cost, in integer nano-USD (1 USD = 1e9), set by the pricing plugin when the response
 * ends. Each part is rounded once per request, so sums of many requests stay exact integers.
 */
export interface RequestCost {
  /** input + cachedInput + cacheWrite + output. */
  totalNanos: number;
  /** Prompt tokens that were neither cache reads nor cache writes, at the input rate. */
  inputNanos: number;
  /** Cache reads, at the cached-input rate (the input rate when the model has none). */
  cachedInputNanos: number;
  /** Cache writes, at the cache-write rate (the input rate when the model has none). */
  cacheWriteNanos: number;
  outputNanos: number;
  /** True when the model has no price: every figure is 0 and the log row says `unpriced`. */
  unpriced: boolean;
  /** The price these figures come from (kept in the log row, `billed_price`); null when unpriced. */
  price: Readonly<ModelPrice> | null;
}

/** Where the request goes: set by the provider router. */
export interface Target {
  /** Provider id as declared in the manifest (`openai`, `groq`, ...). */
  provider: string;
  /** The model id sent upstream, without the provider prefix. */
  model: string;
  /**
   * The model id whose price applies, when it is not `model` (an Azure deployment's name names no
   * price; the model it runs does); absent = `model`. Pricing and budgets look prices up by it.
   */
  priceModel?: string;
  /**
   * How this provider's prompt tokens differ from the local `o200k_base` count (images, tools'
   * system prompt, tokenizer scale), from `Provider.promptTokenRules`; absent = OpenAI's defaults.
   */
  promptTokenRules?: PromptTokenRules;
  /**
   * The non-secret fingerprint of the credential the call is sent with (a pooled key's, the shared
   * key's or the user's own: `…` + its last four characters), for the log row's `upstream_key` and
   * reconciliation per provider key; absent = not told (a target set by hand).
   */
  upstreamKey?: string;
}

export interface Exchange {
  /** `x-request-id` of the response, e.g. `req_6f1c...`. */
  readonly id: string;
  readonly operation: Operation;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Path parameters, URL-decoded (e.g. `provider` of `/api/providers/{provider}`). */
  readonly params: Readonly<Record<string, string>>;
  /** Query-string parameters, URL-decoded; the last value wins when a name repeats (`?limit=5&order=asc`). */
  readonly query: Readonly<Record<string, string>>;
  /** Wall clock at arrival, ms since the epoch. */
  readonly startedAtMs: number;
  /** `performance.now()` at arrival, for latencies. */
  readonly startedAtPerfMs: number;
  /** Aborted when the client disconnects before the response finished, or the gateway gives up. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation without an `AbortSignal` made per request (`exchange-abort.ts`): the
   * upstream call listens here. Absent on exchanges built by hand (tests): `signal` serves then.
   */
  readonly cancellation?: AbortSource;
  /** The dialect the client speaks on a model call; null on other endpoints (account, model lists). */
  readonly dialect: Dialect | null;
  /**
   * The canonical request of a model call, whatever the dialect; null otherwise (and before the body
   * is read). A chat request (OpenAI chat-shaped) or, on an embeddings call, the `EmbeddingRequest`
   * whose inputs the prompt estimate counts and which generates no output tokens: tell them apart
   * with `isEmbeddingRequest` / `chatRequestOf` (`core/canonical/canonical-request.ts`).
   */
  request: CanonicalRequest | null;
  /** The client's own validated body, in its dialect's shape (forwarded on native pass-through). */
  clientBody: Readonly<Record<string, unknown>> | null;
  /** What the canonical request could not carry (`ParsedRequest.untranslatable`): refused if translated. */
  untranslatable: GatewayError | null;
  /**
   * What only the caller's own provider credential may forward (`ParsedRequest.ownCredentialOnly`):
   * the router refuses a native pass-through with a shared key with it. Null or absent when none.
   */
  ownCredentialOnly?: GatewayError | null;
  /**
   * An answer decided before the pipeline ran (the 404 of an unknown endpoint): the request hooks
   * run (authentication, log, metrics), then this error answers instead of the router.
   */
  readonly refusal: GatewayError | null;
  /** True when the client asked for a streamed answer. */
  stream: boolean;
  /** True when a streaming client asked for usage in the stream (OpenAI `stream_options.include_usage`). */
  clientWantsUsage: boolean;
  principal: Principal | null;
  target: Target | null;
  /** Model id the upstream reports it served (`model` of the response). */
  modelServed: string | null;
  /** Token counts reported by the upstream (or estimated, see `usageEstimated`); null when none. */
  usage: TokenCounts | null;
  /** True when `usage` was counted locally (`core/tokens/token-estimate.ts`), not reported by the upstream. */
  usageEstimated: boolean;
  /** The upstream's last sane usage report as read (kept in the log row, `usage_reported`); null when none. */
  usageReport: Usage | null;
  /** Prompt tokens counted locally, memoized by `TokenEstimator.promptTokens`; null until asked. */
  promptTokensEstimate: number | null;
  /** Text the upstream generated so far (content, refusals, tool-call arguments), for estimating usage. */
  readonly generated: string[];
  /**
   * Every upstream attempt of this request in order, the one that served last (`core/proxy/upstream-attempts.ts`);
   * empty or absent when nothing was dispatched.
   */
  attempts?: UpstreamAttempt[];
  /** Status of the upstream's answer once its headers arrived; null when nothing was forwarded. */
  upstreamStatus: number | null;
  /** Set by the pricing plugin when the response ends; null when nothing was billed. */
  cost: RequestCost | null;
  /** Final HTTP status sent (or being sent) to the client. */
  status: number;
  /** `error.code` when the outcome is an error, including an error delivered mid-stream. */
  errorCode: string | null;
  /**
   * The whole canonical answer of a chat call that completed (a stream's chunks joined), kept only when
   * a plugin has `onAnswer` (`core/canonical/completion-assembler.ts`); null or absent otherwise.
   */
  answer?: ChatCompletion | null;
  /** The plugin whose failure ended the request (`plugin_error`), for the log row; null or absent otherwise. */
  errorPlugin?: string | null;
  /**
   * Fields plugins added to the log row (the SDK's `logField`), kept as JSON in `plugin_fields`; null
   * until one is added.
   */
  logFields: Record<string, string | number | boolean | null> | null;
  /** `performance.now()` when the first chunk (stream) or the body (non-stream) was written. */
  firstByteAtPerfMs: number | null;
  /** True when the client left before the response was complete. */
  clientAborted: boolean;
  /** Headers plugins add to the response (lowercase names), written with the status line. */
  readonly responseHeaders: Record<string, string>;
  /** Private per-plugin state, indexed by manifest position; managed by the pipeline. */
  readonly states: unknown[];
}

/** One upstream attempt of a client request, as the log row's `attempts` column stores it. */
export interface UpstreamAttempt {
  /** Provider id and upstream model of the deployment tried (`ex.target` at the time). */
  provider: string;
  model: string;
  /** The upstream's HTTP status; null when no answer arrived (connect refused, timeout). */
  status: number | null;
  /** The error code the attempt failed with (`upstream_timeout`, `rate_limit_exceeded`, ...); null when it served. */
  errorCode: string | null;
  /** From the attempt's dispatch to its outcome (the first byte for a served stream), whole ms. */
  latencyMs: number;
}
