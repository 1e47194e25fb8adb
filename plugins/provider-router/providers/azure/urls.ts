/**
 * Where an Azure OpenAI / Foundry call goes, for either data-plane API of a resource
 * (`https://<resource>.openai.azure.com`, or `https://<resource>.services.ai.azure.com`):
 *
 * | operation | `v1` (GA since August 2025) | `deployments` (dated `api-version`) |
 * |---|---|---|
 * | chat | `/openai/v1/chat/completions` | `/openai/deployments/{deployment}/chat/completions?api-version=V` |
 * | embeddings | `/openai/v1/embeddings` | `/openai/deployments/{deployment}/embeddings?api-version=V` |
 * | Responses | `/openai/v1/responses` | `/openai/responses?api-version=V` |
 * | model list | `/openai/v1/models` | `/openai/models?api-version=V` |
 *
 * On both the body's `model` is the deployment name (the deployment API reads it from the path and
 * ignores the body's; Responses reads it from the body on both). The v1 API needs no `api-version`.
 *
 * Sources: https://learn.microsoft.com/azure/ai-foundry/openai/reference (the deployment API, GA
 * `api-version` 2024-10-21); https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle
 * (the v1 API: `base_url = https://<resource>.openai.azure.com/openai/v1/`, the deployment name as
 * `model`); openai-node `src/azure.ts` (`AzureOpenAI`: `{endpoint}/openai`, `/deployments/{model}`
 * prefixed for chat, embeddings and other deployment endpoints, `api-version` on every call).
 */

/** Which data-plane API a provider entry calls. */
export type AzureApi = 'v1' | 'deployments';

/** The latest GA `api-version` of the deployment API when the manifest names none. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** The operations Tollgate calls at Azure. */
export type AzureOperation = 'chat' | 'embeddings' | 'responses' | 'models';

const DEPLOYMENT_SCOPED: ReadonlySet<AzureOperation> = new Set(['chat', 'embeddings']);
const OPERATION_PATHS: Readonly<Record<AzureOperation, string>> = {
  chat: '/chat/completions', embeddings: '/embeddings', responses: '/responses', models: '/models',
};

/**
 * The path (with its query) of `operation` for `deployment` under `basePath` (the resource endpoint's
 * path, usually empty). The deployment name is percent-encoded: it is the operator's own string.
 */
export function azurePath(api: AzureApi, apiVersion: string, basePath: string, operation: AzureOperation, deployment: string): string {
  const path = OPERATION_PATHS[operation];
  if (api === 'v1') return `${basePath}/openai/v1${path}`;
  const scope = DEPLOYMENT_SCOPED.has(operation) ? `/deployments/${encodeURIComponent(deployment)}` : '';
  return `${basePath}/openai${scope}${path}?api-version=${encodeURIComponent(apiVersion)}`;
}
