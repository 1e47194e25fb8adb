/**
 * The span attributes of a gateway request and of its upstream attempts, after the OpenTelemetry
 * GenAI semantic conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/,
 * registry https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/; the names of
 * v1.37+: `gen_ai.provider.name`, which replaced `gen_ai.system`) and the HTTP ones
 * (`http.response.status_code`, `error.type`). Tollgate's own facts are under `tollgate.*`.
 *
 * The conventions are "Development" status: the names are spelled out here, not imported from the
 * semantic-conventions package's incubating entry, as that package advises.
 */
import type { Attributes } from '@opentelemetry/api';
import type { Exchange, Target } from '../exchange.ts';
import { isEmbeddingRequest } from '../canonical/canonical-request.ts';
import { isModelOperation } from '../dialects/index.ts';
import { usd } from '../money/money.ts';

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
export const GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
export const GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
export const HTTP_REQUEST_METHOD = 'http.request.method';
export const HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const URL_PATH = 'url.path';
export const SERVER_ADDRESS = 'server.address';
export const ERROR_TYPE = 'error.type';

/**
 * The GenAI operation of a model call: `embeddings` for an embeddings call, else `chat` (every
 * dialect's model call is a chat in canonical form: chat completions, Messages, Responses, Gemini);
 * null for the gateway's other endpoints (account, model lists, token counts).
 */
export function genAiOperationOf(ex: Exchange): string | null {
  if (!isModelOperation(ex.operation) || ex.request === null) return null;
  return isEmbeddingRequest(ex.request) ? 'embeddings' : 'chat';
}

/**
 * What the request span carries once the exchange ended: the final status and error code, who
 * called, the model asked for (a group alias as the client named it) and the one that served, the
 * upstream's (or locally counted) tokens as the log row has them, and the cost in USD.
 */
export function requestEndAttributes(ex: Exchange, operation: string | null): Attributes {
  const attributes: Attributes = { [HTTP_RESPONSE_STATUS_CODE]: ex.status };
  if (ex.errorCode !== null) attributes[ERROR_TYPE] = ex.errorCode;
  if (ex.principal) {
    attributes['tollgate.user'] = ex.principal.gatewayUserName;
    attributes['tollgate.user_id'] = ex.principal.gatewayUserId;
    attributes['tollgate.api_key_id'] = ex.principal.apiKeyId;
  }
  if (operation === null) return attributes;
  attributes[GEN_AI_OPERATION_NAME] = operation;
  if (ex.request) attributes[GEN_AI_REQUEST_MODEL] = ex.request.model;
  if (ex.target) attributes[GEN_AI_PROVIDER_NAME] = ex.target.provider;
  if (ex.modelServed) attributes[GEN_AI_RESPONSE_MODEL] = ex.modelServed;
  attributes['tollgate.stream'] = ex.stream;
  const { usage } = ex;
  if (usage) {
    // OpenAI's prompt_tokens, cache reads and writes included: what the convention asks of input_tokens.
    attributes[GEN_AI_USAGE_INPUT_TOKENS] = usage.promptTokens;
    attributes[GEN_AI_USAGE_OUTPUT_TOKENS] = usage.completionTokens;
    if (usage.cachedTokens > 0) attributes[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cachedTokens;
    if (usage.cacheWriteTokens > 0) attributes[GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cacheWriteTokens;
    attributes['tollgate.usage_estimated'] = ex.usageEstimated;
  }
  if (ex.cost) {
    attributes['tollgate.cost_usd'] = usd(ex.cost.totalNanos);
    attributes['tollgate.cost_nanos'] = ex.cost.totalNanos;
    if (ex.cost.unpriced) attributes['tollgate.unpriced'] = true;
  }
  if (ex.attempts && ex.attempts.length > 1) attributes['tollgate.attempts'] = ex.attempts.length;
  return attributes;
}

/** What an attempt span starts with: the deployment tried and where it is. */
export function attemptStartAttributes(target: Target, origin: string, operation: string | null, index: number): Attributes {
  const attributes: Attributes = {
    [GEN_AI_PROVIDER_NAME]: target.provider,
    [GEN_AI_REQUEST_MODEL]: target.model,
    [SERVER_ADDRESS]: hostOf(origin),
    'tollgate.attempt': index,
  };
  if (operation !== null) attributes[GEN_AI_OPERATION_NAME] = operation;
  return attributes;
}

/** `api.openai.com` of `https://api.openai.com:443`; the origin itself when it is not a URL. */
function hostOf(origin: string): string {
  try {
    return new URL(origin).hostname;
  } catch {
    return origin;
  }
}
