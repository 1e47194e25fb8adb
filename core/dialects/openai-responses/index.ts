/**
 * The `openai-responses` dialect: OpenAI's Responses API (`POST /api/v1/responses`), what Codex CLI
 * and the Vercel AI SDK's default `openai(model)` speak. Requests are validated (`request-schema.ts`)
 * and mapped to the canonical OpenAI chat-shaped request (`to-canonical.ts`); canonical answers are
 * rendered as Responses (`render.ts`); errors take OpenAI's body, as in the `openai-chat` dialect. On a
 * native OpenAI upstream the client's body and its `openai-beta` header go through unchanged.
 *
 * `previous_response_id` is not expanded here: the canonical request carries only the body's own
 * input and the id stays in the client body (`to-canonical.ts`, `CanonicalMapping.previousResponseId`),
 * for the gateway to expand from its state store.
 *
 * Sources: openai-node `src/resources/responses/responses.ts`,
 * https://platform.openai.com/docs/api-reference/responses ; docs/architecture.md ("Dialects",
 * "How to add a dialect").
 */
import { createBodyValidator } from '../../request-body.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { invalidRequest } from '../../errors.ts';
import { openAIErrorBody } from '../openai-chat/index.ts';
import { responsesCreateDoc } from './openapi.ts';
import { createOpenAIResponsesRenderer } from './render.ts';
import { responsesRequestSchema } from './request-schema.ts';
import { toCanonical } from './to-canonical.ts';
import type { ResponseCreateParams } from './types.ts';

/** Operation of `POST /api/v1/responses`. */
export const RESPONSES_CREATE = 'responses.create';

const validateCreate = createBodyValidator<ResponseCreateParams>(responsesRequestSchema);

export const openAIResponses: Dialect = {
  id: 'openai-responses',
  routes: [{ method: 'POST', path: '/api/v1/responses', operation: RESPONSES_CREATE, hasBody: true, doc: responsesCreateDoc }],
  passthroughHeaders: ['openai-beta'],
  streamContentType: 'text/event-stream; charset=utf-8',
  parseRequest(json: unknown): ParsedRequest {
    const body = validateCreate(json);
    const stream = body.stream === true;
    // Every Responses stream ends with usage (response.completed), so a streaming client always wants it.
    const { request, untranslatable, previousResponseId } = toCanonical(body);
    // Until the gateway keeps conversation state itself, a continuation can only go to an upstream
    // that keeps it (OpenAI, passed through); translated, it would silently lose the conversation.
    const continuation = previousResponseId
      ? invalidRequest('"previous_response_id" is supported only for models served by OpenAI\'s Responses API for now; send the whole conversation as "input" instead.', 'previous_response_id')
      : null;
    return { canonical: request, body, stream, wantsStreamUsage: stream, untranslatable: untranslatable ?? continuation };
  },
  errorBody: openAIErrorBody,
  createRenderer: createOpenAIResponsesRenderer,
  // `max_output_tokens` is the Responses API's only output limit (reasoning included).
  capOutput: (body, tokens) => ({ ...body, max_output_tokens: tokens }),
};
