/**
 * Claude on Bedrock: Anthropic's Messages API behind `InvokeModel` (`POST /model/{id}/invoke`) and
 * `InvokeModelWithResponseStream` (`/invoke-with-response-stream`). The body is a Messages body
 * without `model` (the path names it) and `stream` (the path says it), with
 * `anthropic_version: "bedrock-2023-05-31"`; beta features go in the body's `anthropic_beta` list,
 * not a header. A non-streamed answer is Anthropic's message as is; a stream is AWS's event stream
 * whose `chunk` events carry `{"bytes": "<base64 of one Anthropic stream event>"}`, rewritten here into
 * Anthropic's own SSE (`event: <type>` / `data: <event>`), so the Anthropic stream decoder reads it and
 * a Messages client receives exactly what Anthropic would send. The last event (`message_stop`)
 * carries `amazon-bedrock-invocationMetrics` (`inputTokenCount`, `outputTokenCount`,
 * `cacheReadInputTokenCount`, `cacheWriteInputTokenCount`), read for usage when the Anthropic events
 * carried none. An exception in the stream becomes Anthropic's `error` event.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html
 * (`anthropic_version`, `anthropic_beta`); API_runtime_InvokeModelWithResponseStream.html (`chunk`,
 * `PayloadPart.bytes`, the exceptions).
 */
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { createChunkBuilder, malformedResponse, parseUpstreamJson } from '../canonical.ts';
import { toCompletion, usageFromAnthropic, type AnthropicMessage } from '../anthropic/response.ts';
import { AnthropicStreamDecoder } from '../anthropic/stream.ts';
import { anthropicErrorTypeOf, mapBedrockError } from './errors.ts';
import { sseEvent, transcodeEventStream, type AwsStreamMessage } from './event-stream.ts';

/** The `anthropic_version` Bedrock's Claude models take. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** True for a Claude model id or inference profile id (`anthropic.claude-…`, `us.anthropic.claude-…`, an ARN naming one). */
export function isClaudeModel(model: string): boolean {
  return /(^|[./])anthropic\.claude/.test(model);
}

/** Anthropic's model id behind a Bedrock Claude id: `us.anthropic.claude-sonnet-4-6-v1:0` → `claude-sonnet-4-6`. */
export function anthropicModelOf(model: string): string {
  const match = /anthropic\.(claude[^:/]*?)(-v\d+)?(:\d+)?$/.exec(model);
  return match ? match[1]! : model;
}

/**
 * The client's Messages body as Bedrock takes it: `model` and `stream` left out, the version added,
 * the `anthropic-beta` header's features as `anthropic_beta`. Every other field is the client's own.
 */
export function bedrockClaudeBody(body: Readonly<Record<string, unknown>>, headers: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (name !== 'model' && name !== 'stream') out[name] = value;
  out.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
  const betas = (headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).filter(Boolean);
  if (betas.length > 0 && out.anthropic_beta === undefined) out.anthropic_beta = betas;
  return out;
}

/** One event-stream message of a Claude stream as Anthropic SSE. */
function claudeSse(provider: string) {
  return (message: AwsStreamMessage): string => {
    if (message.messageType !== 'event') {
      let text = message.payload;
      if (message.messageType === 'exception') text = parseUpstreamJson<{ message?: string } | null>(provider, message.payload || '{}', 'an exception')?.message ?? '';
      const error = { type: 'error', error: { type: anthropicErrorTypeOf(message.name), message: text || message.name } };
      return sseEvent('error', JSON.stringify(error));
    }
    if (message.name !== 'chunk') return '';
    const part = parseUpstreamJson<{ bytes?: unknown } | null>(provider, message.payload, 'a stream chunk');
    if (typeof part?.bytes !== 'string') throw malformedResponse(provider, 'a stream chunk without "bytes"');
    const json = Buffer.from(part.bytes, 'base64').toString('utf8');
    const type = parseUpstreamJson<{ type?: unknown } | null>(provider, json, 'a stream event')?.type;
    return sseEvent(typeof type === 'string' ? type : 'message', json);
  };
}

interface InvocationMetrics {
  inputTokenCount?: number;
  outputTokenCount?: number;
  cacheReadInputTokenCount?: number;
  cacheWriteInputTokenCount?: number;
}

/**
 * Anthropic's stream decoder, plus Bedrock's `amazon-bedrock-invocationMetrics` on `message_stop`
 * as the usage when the Anthropic events gave none.
 */
class BedrockClaudeStreamDecoder implements StreamDecoder {
  private readonly inner: AnthropicStreamDecoder;
  private message: { id: string; model: string } | null = null;
  private sawUsage = false;

  constructor(private readonly provider: string, private readonly model: string) {
    this.inner = new AnthropicStreamDecoder(provider, model);
  }

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const from = out.length;
    const done = this.inner.decode(event, out);
    if (event.event === 'message_start' && this.message === null) {
      const start = parseUpstreamJson<{ message?: { id?: string; model?: string } }>(this.provider, event.data, 'a stream event');
      this.message = { id: start.message?.id ?? '', model: start.message?.model || this.model };
    }
    for (let i = from; i < out.length; i++) if (out[i]!.chunk.usage) this.sawUsage = true;
    if (done && !this.sawUsage) this.usageFromMetrics(event.data, out);
    return done;
  }

  finish(out: DecodedChunk[]): void {
    this.inner.finish(out);
  }

  private usageFromMetrics(data: string, out: DecodedChunk[]): void {
    const metrics = parseUpstreamJson<{ 'amazon-bedrock-invocationMetrics'?: InvocationMetrics }>(this.provider, data, 'a stream event')['amazon-bedrock-invocationMetrics'];
    if (!metrics || !this.message) return;
    const usage = usageFromAnthropic({
      input_tokens: metrics.inputTokenCount, output_tokens: metrics.outputTokenCount,
      cache_read_input_tokens: metrics.cacheReadInputTokenCount, cache_creation_input_tokens: metrics.cacheWriteInputTokenCount,
    });
    out.push({ chunk: createChunkBuilder(this.message.id, this.message.model).usage(usage), raw: null });
  }
}

/** The codec of a Claude call on Bedrock (native or translated): Anthropic's shapes, Bedrock's framing and errors. */
export function claudeCodec(provider: string, model: string): ResponseCodec {
  const toSse = claudeSse(provider);
  return {
    framing: 'sse',
    transcode: (body) => transcodeEventStream(body, provider, toSse),
    decodeError: (status, bodyText, headers) => mapBedrockError(provider, model, status, bodyText, headers),
    decodeResponse: (bodyText) => ({ completion: toCompletion(parseUpstreamJson<AnthropicMessage>(provider, bodyText, 'a response'), provider), raw: null }),
    createStreamDecoder: () => new BedrockClaudeStreamDecoder(provider, model),
  };
}
