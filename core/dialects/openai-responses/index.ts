/**
 * The `openai-responses` dialect: OpenAI's Responses API (`POST /api/v1/responses`), what Codex CLI
 * and the Vercel AI SDK's default `openai(model)` speak. Requests are validated (`request-schema.ts`)
 * and mapped to the canonical OpenAI chat-shaped request (`to-canonical.ts`); canonical answers are
 * rendered as Responses (`render.ts`); errors take OpenAI's body, as in the `openai-chat` dialect. On a
 * native OpenAI upstream the client's body and its `openai-beta` header go through unchanged.
 *
 * Built-in tools (`web_search`, ...) cannot be translated: a translated request that has them is
 * refused with a 400 naming them, unless the client marks their types optional with the header
 * `x-tollgate-optional-tools: web_search,file_search` (or `*`); then the translation leaves them out
 * (Codex sets it with `http_headers` in its provider table). Native pass-through keeps them.
 *
 * `previous_response_id` is not expanded here: the canonical request carries only the body's own
 * input and the id stays in the client body (`to-canonical.ts`, `CanonicalMapping.previousResponseId`).
 * The response-store plugin expands it from the responses it keeps and re-parses the whole
 * conversation (`plugins/response-store/`); a body that still names one when it reaches a translating
 * provider was never expanded (a manifest without that plugin), so it is refused rather than sent
 * without its conversation.
 *
 * An `item_reference` left in the body (the response store replaces those naming the caller's stored
 * items) names an item the gateway does not hold: a native pass-through forwards it only with the
 * caller's own credential (`ParsedRequest.ownCredentialOnly`, 404 `item_not_found` otherwise), since a
 * shared key might open another account's item upstream; a translation refuses it as untranslatable.
 *
 * Sources: openai-node `src/resources/responses/responses.ts`,
 * https://platform.openai.com/docs/api-reference/responses ; docs/architecture.md ("Dialects",
 * "How to add a dialect").
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createBodyValidator } from '../../http/request-body.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { invalidRequest, itemNotFound } from '../../errors.ts';
import { openAIErrorBody } from '../openai-chat/index.ts';
import { responsesCreateDoc } from './openapi.ts';
import { createOpenAIResponsesRenderer } from './render.ts';
import { responsesRequestSchema } from './request-schema.ts';
import { toCanonical } from './to-canonical.ts';
import type { ResponseCreateParams } from './types.ts';

/** Operation of `POST /api/v1/responses`. */
export const RESPONSES_CREATE = 'responses.create';

const validateCreate = createBodyValidator<ResponseCreateParams>(responsesRequestSchema);

/** Header naming the built-in tool types a translation may leave out (comma-separated, or `*`). */
export const OPTIONAL_TOOLS_HEADER = 'x-tollgate-optional-tools';

function optionalTools(headers: IncomingHttpHeaders | undefined): ReadonlySet<string> | undefined {
  const value = headers?.[OPTIONAL_TOOLS_HEADER];
  if (!value) return undefined;
  return new Set((Array.isArray(value) ? value.join(',') : value).split(',').map((type) => type.trim()).filter(Boolean));
}

import { mapResponsesRequestText } from './text.ts';

export const openAIResponses: Dialect = {
  id: 'openai-responses',
  routes: [{ method: 'POST', path: '/api/v1/responses', operation: RESPONSES_CREATE, hasBody: true, doc: responsesCreateDoc }],
  passthroughHeaders: ['openai-beta'],
  streamContentType: 'text/event-stream; charset=utf-8',
  parseRequest(json: unknown, _operation: string, headers?: IncomingHttpHeaders): ParsedRequest {
    const body = validateCreate(json);
    const stream = body.stream === true;
    // Every Responses stream ends with usage (response.completed), so a streaming client always wants it.
    const { request, untranslatable, previousResponseId, firstReference } = toCanonical(body, { optionalTools: optionalTools(headers) });
    // Unexpanded (no response store in the manifest), a continuation can only go to an upstream that
    // keeps the conversation (OpenAI, passed through); translated, it would silently lose it.
    const continuation = previousResponseId
      ? invalidRequest('"previous_response_id" needs the responses the gateway stores, and this gateway runs without its response store (plugin "response-store"); send the whole conversation as "input" instead.', 'previous_response_id')
      : null;
    // An item reference left in the body names an item the gateway does not hold (the response store
    // replaces those it holds): only the caller's own credential may ask the upstream for it.
    const ownCredentialOnly = firstReference !== null ? itemNotFound(firstReference) : null;
    return { canonical: request, body, stream, wantsStreamUsage: stream, untranslatable: untranslatable ?? continuation, ownCredentialOnly };
  },
  errorBody: openAIErrorBody,
  createRenderer: createOpenAIResponsesRenderer,
  // `max_output_tokens` is the Responses API's only output limit (reasoning included).
  capOutput: (body, tokens) => Object.assign({}, body, { max_output_tokens: tokens }),
  mapRequestText: mapResponsesRequestText,
};
