/**
 * The `openai-chat` dialect: OpenAI Chat Completions (`POST /api/v1/chat/completions`). The
 * canonical request and answers are this dialect's own shapes (`core/canonical/chat-types.ts`), so parsing is
 * validation and rendering mostly passes bytes through (`render.ts`). Errors have OpenAI's body
 * `{"error":{"message","type","code","param"}}`.
 */
import { withChatOutputCap, type ChatCompletionRequest } from '../../canonical/chat-types.ts';
import type { GatewayError } from '../../errors.ts';
import { mapChatRequestText } from '../../canonical/text-map.ts';
import { createBodyValidator } from '../../http/request-body.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { chatCompletionRequestSchema } from './request-schema.ts';
import { chatCompletionsDoc } from './openapi.ts';
import { createOpenAIChatRenderer } from './render.ts';

const validateChat = createBodyValidator<ChatCompletionRequest>(chatCompletionRequestSchema);

/** OpenAI's error body, the default shape for every route that is not another dialect's. */
export function openAIErrorBody(err: GatewayError): unknown {
  return err.toBody();
}

export const openAIChat: Dialect = {
  id: 'openai-chat',
  routes: [{ method: 'POST', path: '/api/v1/chat/completions', operation: 'chat.completions', hasBody: true, doc: chatCompletionsDoc }],
  passthroughHeaders: ['openai-beta'],
  streamContentType: 'text/event-stream; charset=utf-8',
  parseRequest(json: unknown): ParsedRequest {
    const request = validateChat(json);
    const stream = request.stream === true;
    return { canonical: request, body: request, stream, wantsStreamUsage: stream && request.stream_options?.include_usage === true };
  },
  errorBody: openAIErrorBody,
  createRenderer: createOpenAIChatRenderer,
  capOutput: (body, tokens) => withChatOutputCap(body, tokens),
  // The body is the canonical request itself.
  mapRequestText: (body, fn) => mapChatRequestText(body as ChatCompletionRequest, fn),
};
