/**
 * What the relay of an upstream answer is given (the proxy room's contract, `proxy.ts` and its relays):
 * the response-phase hooks already bound to the plugins entered for the exchange, and the proxy's
 * dependencies. Types only, so the pipeline and every relay can name them without importing machinery.
 */
import type { Exchange } from '../exchange.ts';
import type { ChatCompletionChunk, Usage } from '../canonical/chat-types.ts';
import type { CompletionAssembler } from '../canonical/completion-assembler.ts';
import type { UpstreamClient } from '../upstream/upstream-client.ts';
import type { Log } from '../runtime/log.ts';
import type { TokenEstimator } from '../tokens/token-estimate.ts';
import type { RequestTracing } from '../telemetry/request-tracing.ts';

/** Response-phase callbacks, already bound to the plugins entered for this exchange (so `this: void`: callable detached). */
export interface ResponseHooks {
  start(this: void, ex: Exchange): void;
  chunk(this: void, ex: Exchange, chunk: ChatCompletionChunk): void;
  /** The `onResponseComplete` hooks with the final answer object; never rejects (failures are logged). */
  complete(this: void, ex: Exchange, final: unknown): Promise<void>;
  /** True when a plugin has `onAnswer`: the relay keeps the whole answer in `ex.answer`. */
  readonly wantsAnswer: boolean;
  /**
   * The plugins' `rewriteAnswerText` hooks composed (`Plugin.rewriteAnswerText`), or null when no plugin
   * has one. When set, an answer is always rendered from its decoded form, native pass-through too.
   */
  readonly rewrite: AnswerRewrite | null;
}

/** Rewrites one piece of a choice's answer text (`Plugin.rewriteAnswerText`, composed). */
export type AnswerRewrite = (this: void, ex: Exchange, text: string, end: boolean, choiceIndex: number) => string;

export interface ProxyDeps {
  upstream: UpstreamClient;
  maxResponseBytes: number;
  /** Most bytes relayed from one upstream stream (default `DEFAULT_MAX_STREAM_BYTES`). */
  maxStreamBytes?: number;
  log: Log;
  tokens: TokenEstimator;
  /** The tracer (manifest `tracing`); null or absent when tracing is off, the default. */
  tracing?: RequestTracing | null;
}

/** The response hooks plus where the upstream's usage reports go (`createUsageReader`). */
export interface ObservingHooks extends ResponseHooks {
  usage(ex: Exchange, report: Usage): void;
  /** The call's credentials (`credentialsOf`), redacted from every upstream text. */
  secrets: readonly string[];
  /** Joins a stream's chunks when `wantsAnswer`; null otherwise. */
  assembler: CompletionAssembler | null;
}
