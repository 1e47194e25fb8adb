/**
 * Rendering canonical answers as Gemini `GenerateContentResponse`s: a `chat.completion` becomes one
 * response, a stream of `chat.completion.chunk`s one response per chunk, as SSE events
 * (`data: <json>`, `?alt=sse`, what `@google/genai` and Gemini CLI ask for) or, without `alt=sse`,
 * as the items of one JSON array (`[{...}\n,{...}]`, the API's default stream form). Used when a
 * translating provider answered; a native Gemini upstream's bytes are relayed unchanged.
 *
 * Sources: https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse ,
 * https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent ;
 * docs/provider-wire-formats.md §3 (read right to left).
 *
 * - Parts: reasoning text → `{text, thought: true}` first; text (and a refusal's) → `{text}`; each tool
 *   call → `{functionCall: {id, name, args}}` (the id comes back on `functionResponse.id`, so a
 *   translated round trip keeps the upstream's call ids). A streamed call's argument fragments are
 *   gathered and sent whole (Gemini never splits a call) with the event that carries the finish reason.
 * - `finishReason`: stop / tool_calls → STOP, length → MAX_TOKENS, content_filter → SAFETY.
 * - `usageMetadata`: `candidatesTokenCount` = completion − reasoning tokens, `thoughtsTokenCount` =
 *   reasoning tokens, `cachedContentTokenCount` = cache reads (part of `promptTokenCount`), as Gemini counts.
 *   In a stream it goes out once, on the last event, with the final counts (`ex.usage`).
 */
import { randomBytes } from 'node:crypto';
import type { ChatCompletionChunk, TokenCounts, Usage } from '../../canonical/chat-types.ts';
import { messageTexts, reasoningOf, tokenCountsOf } from '../../canonical/chat-types.ts';
import type { GatewayError } from '../../errors.ts';
import type { Exchange } from '../../exchange.ts';
import type { DecodedChunk, DecodedResponse } from '../../upstream/upstream-call.ts';
import type { ResponseRenderer } from '../dialect.ts';
import type { EmbeddingResult } from '../../canonical/embedding-types.ts';
import { renderEmbeddings } from './embed.ts';
import { geminiErrorBody } from './errors.ts';
import type { GeminiPart, GenerateContentResponse, UsageMetadata } from './types.ts';

const FINISH_REASONS: Readonly<Record<string, string>> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  function_call: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
};

/** Canonical `finish_reason` → Gemini `finishReason`; none or unknown → STOP. */
export function finishReasonOf(reason: string | null | undefined): string {
  return (reason && FINISH_REASONS[reason]) || 'STOP';
}

/** Canonical counts (+ reasoning tokens, part of the completion's) → `usageMetadata`. */
export function usageMetadataOf(counts: TokenCounts | null, reasoningTokens: number): UsageMetadata {
  const prompt = counts?.promptTokens ?? 0;
  const completion = counts?.completionTokens ?? 0;
  const thoughts = Math.min(reasoningTokens, completion);
  const usage: UsageMetadata = { promptTokenCount: prompt, candidatesTokenCount: completion - thoughts, totalTokenCount: prompt + completion };
  if (counts && counts.cachedTokens > 0) usage.cachedContentTokenCount = counts.cachedTokens;
  if (thoughts > 0) usage.thoughtsTokenCount = thoughts;
  return usage;
}

/** A tool call's arguments as the `args` object; `{}` when empty or not a JSON object. */
function argsOf(args: string | undefined): Record<string, unknown> {
  try {
    const value: unknown = args ? JSON.parse(args) : {};
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function reasoningTokensOf(usage: Usage | null | undefined): number {
  const tokens = usage?.completion_tokens_details?.reasoning_tokens;
  return typeof tokens === 'number' && tokens > 0 ? tokens : 0;
}

/** A streamed tool call being gathered, by canonical index. */
interface PendingCall {
  id: string;
  name: string;
  args: string;
}

class GeminiRenderer implements ResponseRenderer {
  private readonly responseId = randomBytes(12).toString('base64url');
  /** Events written so far (the JSON-array form needs to know the first). */
  private events = 0;
  private readonly calls = new Map<number, PendingCall>();
  private finishReason: string | null = null;
  private reasoningTokens = 0;
  private servedModel = '';

  constructor(private readonly ex: Exchange) {}

  private get sse(): boolean {
    return this.ex.query.alt === 'sse';
  }

  private model(fromUpstream?: string): string {
    return fromUpstream || this.servedModel || this.ex.modelServed || this.ex.target?.model || this.ex.request?.model || '';
  }

  private response(parts: GeminiPart[], finishReason?: string, usage?: UsageMetadata): GenerateContentResponse {
    const candidate: GenerateContentResponse['candidates'][number] = { content: { role: 'model', parts }, index: 0 };
    if (finishReason) candidate.finishReason = finishReason;
    const out: GenerateContentResponse = { candidates: [candidate], modelVersion: this.model(), responseId: this.responseId };
    if (usage) out.usageMetadata = usage;
    return out;
  }

  completion({ completion }: DecodedResponse): string {
    this.servedModel = completion.model;
    const choice = completion.choices[0];
    const parts: GeminiPart[] = [];
    if (choice) {
      const reasoning = reasoningOf(choice.message);
      if (reasoning) parts.push({ text: reasoning, thought: true });
      for (const text of messageTexts(choice.message)) parts.push({ text });
      for (const call of choice.message.tool_calls ?? []) {
        parts.push({ functionCall: { id: call.id, name: call.function.name, args: argsOf(call.function.arguments) } });
      }
    }
    const counts = this.ex.usage ?? (completion.usage ? tokenCountsOf(completion.usage) : null);
    return JSON.stringify(this.response(parts, finishReasonOf(choice?.finish_reason), usageMetadataOf(counts, reasoningTokensOf(completion.usage))));
  }

  chunk({ chunk }: DecodedChunk): string {
    this.reasoningTokens = reasoningTokensOf(chunk.usage) || this.reasoningTokens;
    if (chunk.model) this.servedModel = chunk.model;
    const parts = this.partsOf(chunk);
    return parts.length === 0 ? '' : this.event(this.response(parts));
  }

  end(): string {
    const parts: GeminiPart[] = [...this.calls.values()].map((call) => ({
      functionCall: { id: call.id, name: call.name, args: argsOf(call.args) },
    }));
    // Gemini's last event carries the finish reason and the usage; an empty text part keeps `content` well-formed.
    if (parts.length === 0) parts.push({ text: '' });
    const last = this.event(this.response(parts, finishReasonOf(this.finishReason), usageMetadataOf(this.ex.usage, this.reasoningTokens)));
    return this.sse ? last : `${last}]`;
  }

  /** An embeddings answer from a translating provider, in the shape of the client's method. */
  embeddings(result: EmbeddingResult): string {
    return renderEmbeddings(this.ex.operation, result);
  }

  error(err: GatewayError): string {
    const body = JSON.stringify(geminiErrorBody(err));
    if (this.sse) return `data: ${body}\n\n`;
    return `${this.events++ === 0 ? '[' : '\n,'}${body}]`;
  }

  /** One stream event in the client's form. */
  private event(response: GenerateContentResponse): string {
    const json = JSON.stringify(response);
    if (this.sse) return `data: ${json}\n\n`;
    return `${this.events++ === 0 ? '[' : '\n,'}${json}`;
  }

  /** The parts a chunk's first choice sends now; tool-call fragments are gathered for `end()`. */
  private partsOf(chunk: ChatCompletionChunk): GeminiPart[] {
    const parts: GeminiPart[] = [];
    for (const choice of chunk.choices) {
      // Only one candidate is ever translated.
      if (choice.index !== 0) continue;
      const { delta } = choice;
      const reasoning = reasoningOf(delta);
      if (reasoning) parts.push({ text: reasoning, thought: true });
      if (typeof delta.content === 'string' && delta.content) parts.push({ text: delta.content });
      if (typeof delta.refusal === 'string' && delta.refusal) parts.push({ text: delta.refusal });
      for (const call of delta.tool_calls ?? []) {
        const pending = this.calls.get(call.index) ?? { id: '', name: '', args: '' };
        if (call.id) pending.id = call.id;
        if (call.function?.name) pending.name = call.function.name;
        if (call.function?.arguments) pending.args += call.function.arguments;
        this.calls.set(call.index, pending);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return parts;
  }
}

/** A renderer for one exchange's answer in Gemini's shapes. */
export function createGeminiRenderer(ex: Exchange): ResponseRenderer {
  return new GeminiRenderer(ex);
}
