/**
 * Claude on Vertex AI: Anthropic's Messages API behind `:rawPredict` and `:streamRawPredict` of
 * `publishers/anthropic/models/{model}`. The body is a Messages body without `model` (the path names
 * it) and with `anthropic_version: "vertex-2023-10-16"`; `stream: true` stays in the body of a
 * streamed call, and beta features go in the `anthropic-beta` header as at Anthropic. Answers are
 * Anthropic's own: the message, and for a stream Anthropic's named-event SSE, so the Anthropic
 * provider's decoders read them and a Messages client receives what Anthropic would send.
 *
 * Sources: https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude
 * (`anthropic_version`, the two methods); https://platform.claude.com/docs/en/build-with-claude/claude-on-vertex-ai ;
 * `@anthropic-ai/vertex-sdk` (the path and body it builds).
 */
import type { ResponseCodec } from '../../../../core/upstream/upstream-call.ts';
import { parseUpstreamJson } from '../canonical.ts';
import { toCompletion, type AnthropicMessage } from '../anthropic/response.ts';
import { AnthropicStreamDecoder } from '../anthropic/stream.ts';
import { mapVertexError } from './errors.ts';

/** The `anthropic_version` Vertex AI's Claude models take. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** True for a Claude model id on Vertex (`claude-sonnet-4-5@20250929`, `claude-opus-4-1`). */
export function isClaudeModel(model: string): boolean {
  return model.startsWith('claude-');
}

/** Anthropic's model id behind a Vertex Claude id: `claude-sonnet-4-5@20250929` → `claude-sonnet-4-5`. */
export function anthropicModelOf(model: string): string {
  const at = model.indexOf('@');
  return at === -1 ? model : model.slice(0, at);
}

/** The client's Messages body as Vertex takes it: `model` left out, the version added; every other field the client's own. */
export function vertexClaudeBody(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (name !== 'model') out[name] = value;
  out.anthropic_version = VERTEX_ANTHROPIC_VERSION;
  return out;
}

/** The codec of a Claude call on Vertex (native or translated): Anthropic's shapes, Vertex's errors. */
export function claudeCodec(provider: string, model: string): ResponseCodec {
  return {
    framing: 'sse',
    decodeError: (status, bodyText, headers) => mapVertexError(provider, model, status, bodyText, headers),
    decodeResponse: (bodyText) => ({ completion: toCompletion(parseUpstreamJson<AnthropicMessage>(provider, bodyText, 'a response'), provider), raw: null }),
    createStreamDecoder: () => new AnthropicStreamDecoder(provider, model),
  };
}
