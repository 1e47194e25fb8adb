/**
 * Reading OpenAI's Responses API answers (`POST /v1/responses`) as canonical shapes, for a native
 * pass-through: the client gets the upstream's bytes, and this codec only observes them for what
 * the gateway bills and logs (served model, usage, generated text).
 *
 * Sources: https://platform.openai.com/docs/api-reference/responses/create ,
 * https://platform.openai.com/docs/api-reference/responses-streaming ; openai-node
 * `src/resources/responses/responses.ts` (`Response`, `ResponseUsage`, `ResponseStreamEvent`).
 * - A `response` has `output` items (`message` with `output_text` parts, `function_call` with
 *   `arguments`, `reasoning`) and `usage` `{input_tokens, input_tokens_details.cached_tokens,
 *   output_tokens, output_tokens_details.reasoning_tokens}`; `input_tokens` includes cached ones.
 * - A stream is named SSE events: `response.output_text.delta` (`delta`),
 *   `response.function_call_arguments.delta` (`delta`), and one terminal event carrying the whole
 *   response: `response.completed`, `response.incomplete` or `response.failed`; `error` is in-band.
 * - The whole `response` (the JSON body, or the terminal event's) is handed on as the answer's `final`
 *   object, which the gateway's response store keeps (`DecodedChunk.final`).
 */
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../../../core/canonical/chat-types.ts';
import type { DecodedChunk, FramedEvent, ResponseCodec, StreamDecoder } from '../../../../core/upstream/upstream-call.ts';
import { upstreamError } from '../../../../core/errors.ts';
import { malformedResponse, parseUpstreamJson, truncatedStream, usageOf, type UpstreamHeaders } from '../canonical.ts';
import type { GatewayError } from '../../../../core/errors.ts';

interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

interface ResponseObject {
  id?: string;
  model?: string;
  status?: string;
  output?: Array<{ type?: string; content?: Array<{ type?: string; text?: string }>; arguments?: string }>;
  usage?: ResponsesUsage | null;
  error?: { code?: string; message?: string } | null;
}

/** Responses usage → canonical usage (`input_tokens` already includes the cached ones). */
function canonicalUsage(usage: ResponsesUsage): Usage {
  return usageOf(
    usage.input_tokens ?? 0, usage.output_tokens ?? 0, usage.input_tokens_details?.cached_tokens ?? 0, 0,
    usage.output_tokens_details?.reasoning_tokens,
  );
}

/** The observed completion of a whole `response`: its text and arguments as one message, its usage. */
function toCompletion(response: ResponseObject, model: string): ChatCompletion {
  const text: string[] = [];
  for (const item of response.output ?? []) {
    if (item.type === 'message') for (const part of item.content ?? []) if (typeof part.text === 'string') text.push(part.text);
    if (item.type === 'function_call' && typeof item.arguments === 'string') text.push(item.arguments);
  }
  return {
    id: response.id ?? '', object: 'chat.completion', created: 0, model: response.model ?? model,
    choices: [{ index: 0, message: { role: 'assistant', content: text.join('') }, finish_reason: response.status === 'incomplete' ? 'length' : 'stop' }],
    usage: response.usage ? canonicalUsage(response.usage) : null,
  };
}

class ResponsesStreamObserver implements StreamDecoder {
  private finished = false;
  /** The model `response.created` names (the one serving, e.g. a dated snapshot); the requested one until then. */
  private served: string | null = null;

  constructor(private readonly provider: string, private readonly model: string) {}

  decode(event: FramedEvent, out: DecodedChunk[]): boolean {
    const data = parseUpstreamJson<{ type?: string; delta?: string; response?: ResponseObject; message?: string; code?: string }>(this.provider, event.data, 'a stream event');
    const type = data.type ?? event.event;
    switch (type) {
      case 'response.output_text.delta':
      case 'response.function_call_arguments.delta':
        if (typeof data.delta === 'string') out.push({ chunk: this.chunk({ content: data.delta }, null), raw: null });
        return false;
      case 'response.completed':
      case 'response.incomplete': {
        const response = data.response ?? {};
        const chunk = this.chunk({}, type === 'response.incomplete' ? 'length' : 'stop', response.model);
        if (response.usage) chunk.usage = canonicalUsage(response.usage);
        out.push({ chunk, raw: null, final: data.response });
        this.finished = true;
        return true;
      }
      case 'response.created':
        if (typeof data.response?.model === 'string' && data.response.model) this.served = data.response.model;
        return false;
      case 'response.failed':
      case 'error': {
        const error = data.response?.error ?? data;
        throw upstreamError({ status: 502, code: error?.code ?? null, message: `Provider "${this.provider}" failed mid-stream${error?.message ? `: ${error.message}` : '.'}` });
      }
      default:
        return false;
    }
  }

  finish(): void {
    if (!this.finished) throw truncatedStream(this.provider);
  }

  private chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: string | null, model = this.served ?? this.model): ChatCompletionChunk {
    return { id: '', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  }
}

/** The codec of a passed-through Responses call; `decodeError` is the provider's own error mapping. */
export function responsesCodec(
  provider: string, model: string, decodeError: (status: number, bodyText: string, headers: UpstreamHeaders) => GatewayError,
): ResponseCodec {
  return {
    framing: 'sse',
    decodeError,
    decodeResponse(bodyText) {
      const response = parseUpstreamJson<ResponseObject>(provider, bodyText, 'a response');
      if (!response || !Array.isArray(response.output)) throw malformedResponse(provider, 'a response without "output"');
      return { completion: toCompletion(response, model), raw: null, final: response };
    },
    createStreamDecoder: () => new ResponsesStreamObserver(provider, model),
  };
}
