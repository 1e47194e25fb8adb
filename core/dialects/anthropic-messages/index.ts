/**
 * The `anthropic-messages` dialect: Anthropic's Messages API (`POST /api/v1/messages` and
 * `POST /api/v1/messages/count_tokens`, also at `/api/messages...`), what Claude Code, the Anthropic
 * SDK, `@ai-sdk/anthropic` and opencode speak. Requests are
 * validated (`request-schema.ts`) and mapped to the canonical OpenAI-shaped request
 * (`to-canonical.ts`); canonical answers are rendered as Messages (`render.ts`); errors take
 * Anthropic's body (`errors.ts`). On a native Anthropic upstream the client's body and its
 * `anthropic-version` / `anthropic-beta` headers go through unchanged.
 *
 * Sources: https://platform.claude.com/docs/en/api/messages ,
 * https://platform.claude.com/docs/en/api/messages-count-tokens ; docs/provider-wire-formats.md §2;
 * docs/architecture.md ("Dialects", "How to add a dialect").
 */
import { createBodyValidator } from '../../http/request-body.ts';
import type { Dialect, ParsedRequest } from '../dialect.ts';
import { anthropicErrorBody } from './errors.ts';
import { messagesCountTokensDoc, messagesCountTokensUnversionedDoc, messagesCreateDoc, messagesCreateUnversionedDoc } from './openapi.ts';
import { createAnthropicMessagesRenderer } from './render.ts';
import { countTokensRequestSchema, messagesRequestSchema } from './request-schema.ts';
import { toCanonical } from './to-canonical.ts';
import type { MessageCountTokensParams, MessageCreateParams } from './types.ts';

/** Operation of `POST /api/v1/messages`. */
export const MESSAGES_CREATE = 'messages.create';
/** Operation of `POST /api/v1/messages/count_tokens`. */
export const MESSAGES_COUNT_TOKENS = 'messages.count_tokens';

const validateCreate = createBodyValidator<MessageCreateParams>(messagesRequestSchema);
const validateCountTokens = createBodyValidator<MessageCountTokensParams>(countTokensRequestSchema);

export { anthropicErrorBody } from './errors.ts';
import { mapMessagesRequestText } from './text.ts';

export const anthropicMessages: Dialect = {
  id: 'anthropic-messages',
  routes: [
    { method: 'POST', path: '/api/v1/messages', operation: MESSAGES_CREATE, hasBody: true, doc: messagesCreateDoc },
    { method: 'POST', path: '/api/v1/messages/count_tokens', operation: MESSAGES_COUNT_TOKENS, hasBody: true, kind: 'token-count', doc: messagesCountTokensDoc },
    // `@ai-sdk/anthropic` and opencode append only `/messages` to ANTHROPIC_BASE_URL (`<gateway>/api`).
    { method: 'POST', path: '/api/messages', operation: MESSAGES_CREATE, hasBody: true, doc: messagesCreateUnversionedDoc },
    { method: 'POST', path: '/api/messages/count_tokens', operation: MESSAGES_COUNT_TOKENS, hasBody: true, kind: 'token-count', doc: messagesCountTokensUnversionedDoc },
  ],
  passthroughHeaders: ['anthropic-version', 'anthropic-beta'],
  streamContentType: 'text/event-stream; charset=utf-8',
  parseRequest(json: unknown, operation: string): ParsedRequest {
    if (operation === MESSAGES_COUNT_TOKENS) {
      const body = validateCountTokens(json);
      // Counting never streams, whatever extra field the body carries.
      const { stream: _stream, ...counted } = body;
      const { request, untranslatable } = toCanonical(counted);
      return { canonical: request, body, stream: false, wantsStreamUsage: false, untranslatable };
    }
    const body = validateCreate(json);
    const stream = body.stream === true;
    // Every Messages stream carries usage (message_start / message_delta), so a streaming client always wants it.
    const { request, untranslatable } = toCanonical(body);
    return { canonical: request, body, stream, wantsStreamUsage: stream, untranslatable };
  },
  errorBody: anthropicErrorBody,
  createRenderer: createAnthropicMessagesRenderer,
  tokenCountBody: (inputTokens) => ({ input_tokens: inputTokens }),
  // `max_tokens` is required and is the only output limit of a Messages request.
  capOutput: (body, tokens) => Object.assign({}, body, { max_tokens: tokens }),
  mapRequestText: mapMessagesRequestText,
};
