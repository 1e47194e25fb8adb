/**
 * Azure OpenAI's error answers, read into the shared policy's facts (`../upstream-error-policy.ts`).
 * The body is OpenAI's `{"error":{"code","message",...}}`, with Azure's own codes:
 * - 401 `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API
 *   endpoint. …"}}`: the key (or the endpoint it belongs to) is refused → rule 1;
 * - 404 `DeploymentNotFound` ("The API deployment for this resource does not exist. …"): the model
 *   (deployment) is unknown → rule 3, with a hint;
 * - 400 `content_filter` with `innererror: {code: "ResponsibleAIPolicyViolation",
 *   content_filter_result: {...}}`: the prompt was filtered → rule 10 (400, code kept, not retried);
 * - 429 `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation … have
 *   exceeded token rate limit … Please retry after 6 seconds."}}` with `retry-after` (seconds) and
 *   `retry-after-ms` headers → rule 6, the headers passed on by the policy.
 * The request id an operator quotes to Microsoft is `apim-request-id` (also sent as `x-request-id`).
 *
 * Sources: https://learn.microsoft.com/azure/ai-foundry/openai/reference (error response);
 * https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter (the 400 and its
 * `innererror`); https://learn.microsoft.com/azure/ai-foundry/openai/quotas-limits (429, retry-after).
 */
import type { GatewayError } from '../../../../core/errors.ts';
import { headerValue, type UpstreamHeaders } from '../canonical.ts';
import { openAIErrorFacts } from '../openai/index.ts';
import { upstreamErrorFor, type UpstreamErrorFacts } from '../upstream-error-policy.ts';

const DEPLOYMENT_NOT_FOUND = 'DeploymentNotFound';

/** The policy's facts from an Azure error answer (module doc). */
export function azureErrorFacts(status: number, bodyText: string, headers: UpstreamHeaders): UpstreamErrorFacts {
  const facts = openAIErrorFacts(status, bodyText);
  if (facts.code === DEPLOYMENT_NOT_FOUND) {
    facts.kind = 'unknown_model';
    facts.hint = 'Azure addresses a model by its deployment name: check it under the resource\'s Deployments.';
  }
  facts.requestId = headerValue(headers, 'apim-request-id') ?? null;
  return facts;
}

/** An Azure error answer as the client's error, by the shared policy. */
export function mapAzureError(provider: string, model: string, status: number, bodyText: string, headers: UpstreamHeaders): GatewayError {
  return upstreamErrorFor(provider, model, status, azureErrorFacts(status, bodyText, headers), headers);
}
