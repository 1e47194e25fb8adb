import type { JsonSchema } from '../../core/json-schema.ts';
import type { ProviderSettings } from './providers/base.ts';
import { providerTypes } from './providers/index.ts';

/** One place a model group can send a request: a provider's model, with its share of the traffic. */
export interface DeploymentConfig {
  provider: string;
  model: string;
  /** Relative share under `balance` (default 1); ignored by `fallback`. */
  weight?: number;
  /** A shared API key for this deployment instead of the provider's own ("" or absent = the provider's). */
  apiKey?: string;
}

/** A model name clients ask for, served by one or more deployments. */
export interface ModelGroupConfig {
  /** `fallback` (default): deployments in order. `balance`: by weight among the least busy, the others as fallbacks. */
  strategy?: 'fallback' | 'balance';
  deployments: DeploymentConfig[];
}

/** When and how often a failed attempt is tried again before the first byte reached the client. */
export interface RetryConfig {
  /** Attempts per client request, the first included, across all deployments. */
  maxAttempts: number;
  /** Extra rounds over the deployments once each was tried, after a backoff (0 = none). */
  retriesPerDeployment: number;
  /** No attempt starts later than this after the request arrived, in ms. */
  deadlineMs: number;
  /** Base of the exponential backoff between rounds, in ms (full jitter). */
  backoffMs: number;
  /** Ceiling of one backoff, in ms. */
  maxBackoffMs: number;
  /** A `retry-after` longer than this ends the retries instead of being waited for, in ms. */
  maxRetryAfterMs: number;
  /** Upstream HTTP statuses worth another attempt; connection failures and timeouts always are. */
  retryOnStatus: number[];
}

/** When a deployment is skipped after failing (`circuit-breaker.ts`). */
export interface CircuitBreakerConfig {
  /** Failures within `windowMs` that open the breaker. */
  failureThreshold: number;
  /** The window failures are counted in, ms. */
  windowMs: number;
  /** How long an open breaker skips the deployment before one probe, ms. */
  cooldownMs: number;
}

export interface ProviderRouterConfig {
  providers: Record<string, ProviderSettings>;
  /** Model names clients may use: `"provider/model"` (an alias) or a group of deployments. */
  models: Record<string, string | ModelGroupConfig>;
  /** Which provider serves a bare model id several providers list, first listed first. */
  providerOrder: string[];
  retry: RetryConfig;
  circuitBreaker: CircuitBreakerConfig;
  /** How long a pooled key rests after a 429 that named no retry-after, ms. */
  keyCooldownMs: number;
  catalogTtlMs: number;
}

const providerId = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };

const deploymentSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['provider', 'model'],
  properties: {
    provider: { ...providerId, description: 'A provider id of `providers`.' },
    model: { type: 'string', minLength: 1, description: 'The model id at that provider, without the provider prefix.' },
    weight: { type: 'number', exclusiveMinimum: 0, default: 1, description: 'Share of the traffic under "balance", relative to the other deployments\' weights.' },
    apiKey: { type: 'string', description: 'A shared API key for this deployment only (e.g. another account); default the provider\'s. Use "${NAME}" to read it from the environment. A user\'s own credential still wins.' },
  },
};

const modelGroupSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deployments'],
  properties: {
    strategy: {
      enum: ['fallback', 'balance'], default: 'fallback',
      description: '"fallback": try the deployments in order. "balance": pick by weight among the deployments with the fewest requests in flight, the others as fallbacks.',
    },
    deployments: { type: 'array', minItems: 1, items: deploymentSchema, description: 'Where requests for this name may go.' },
  },
};

export const providerRouterSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    providers: {
      type: 'object',
      description: 'Upstream providers by id; the id is the model prefix clients use ("openai/gpt-4o-mini").',
      default: {},
      propertyNames: { pattern: '^[a-z0-9][a-z0-9_-]*$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        // Bedrock derives its endpoints from its region, Vertex AI from its project and location;
        // every other provider needs its base URL.
        if: { properties: { type: { const: 'bedrock' } } },
        then: { required: ['region'] },
        else: {
          if: { properties: { type: { const: 'vertex' } } },
          then: { required: ['project', 'location'] },
          else: { required: ['baseUrl'] },
        },
        properties: {
          type: { enum: [...providerTypes.keys()], description: 'Which implementation speaks to this upstream.' },
          baseUrl: {
            type: 'string', pattern: '^https?://',
            description: 'Base URL as the provider documents it: "https://api.openai.com/v1", "https://api.anthropic.com", "https://generativelanguage.googleapis.com/v1beta", "https://api.mistral.ai/v1", "http://127.0.0.1:11434"; an Azure OpenAI resource endpoint "https://<resource>.openai.azure.com"; an OpenAI-compatible server\'s URL up to "/v1".',
          },
          nativeDialects: {
            type: 'array',
            items: { enum: ['openai-responses'] },
            description: 'For "openai-compatible": the dialects the server also serves natively besides Chat Completions (["openai-responses"] when it has /v1/responses); those requests are passed through instead of translated.',
          },
          azureApi: {
            enum: ['v1', 'deployments'],
            description: 'For "azure": the data-plane API to call (default "v1"). "v1": /openai/v1/... with the deployment name as the body\'s model, no api-version. "deployments": /openai/deployments/{deployment}/chat/completions?api-version=... (and /embeddings; Responses at /openai/responses?api-version=...).',
          },
          apiVersion: {
            type: 'string', minLength: 1,
            description: 'For "azure" with azureApi "deployments": the api-version query sent on every call, e.g. "2024-10-21" (the default, GA) or "2025-04-01-preview" (Responses need a preview version).',
          },
          deployments: {
            type: 'object',
            description: 'For "azure": the resource\'s deployments by name, listed in GET /api/v1/models as "<provider>/<deployment>" (Azure lists no deployments to an API key). "model" is the model the deployment runs (e.g. "gpt-4o-mini"): it is priced from the price dataset under that name and judged by it (prompt tokens, reasoning_effort). A deployment not listed here can still be called; it is then priced by its own name.',
            additionalProperties: {
              type: 'object', additionalProperties: false,
              properties: { model: { type: 'string', minLength: 1, description: 'The model this deployment runs, as OpenAI names it (e.g. "gpt-4o-mini").' } },
            },
          },
          entra: {
            type: 'object', additionalProperties: false,
            description: 'For "azure": authenticate with Microsoft Entra ID tokens (scope https://cognitiveservices.azure.com/.default, sent as "Authorization: Bearer") instead of an api-key; used for calls without a key (apiKey empty, no pool key, no user\'s own key). With tenantId, clientId and clientSecret: that app registration\'s client secret. With managedIdentity true: the managed identity of the host the gateway runs on (system-assigned, or the user-assigned one clientId names), from the platform\'s own token endpoint (App Service and Functions: IDENTITY_ENDPOINT + IDENTITY_HEADER; Azure Arc, Cloud Shell, Service Fabric; else the VM/AKS instance metadata service). With clientId alone: that user-assigned managed identity. {}: the default Azure credential (AZURE_* environment, workload identity, the managed identity, the Azure CLI login). The identity needs the "Cognitive Services OpenAI User" role on the resource.',
            properties: {
              tenantId: { type: 'string', minLength: 1, description: 'The directory (tenant) id of the app registration.' },
              clientId: { type: 'string', minLength: 1, description: 'The app registration\'s application (client) id, or a user-assigned managed identity\'s client id.' },
              clientSecret: { type: 'string', minLength: 1, description: 'The app registration\'s client secret, usually "${AZURE_CLIENT_SECRET}"; needs tenantId and clientId.' },
              authorityHost: { type: 'string', pattern: '^https://', description: 'The Entra authority host (default https://login.microsoftonline.com), e.g. https://login.microsoftonline.us for Azure Government.' },
              managedIdentity: { type: 'boolean', description: 'true: only the host\'s managed identity (system-assigned, or the user-assigned one of clientId), never another source of the default credential; tenantId, clientSecret and authorityHost do not apply.' },
            },
            dependencies: { clientSecret: ['tenantId', 'clientId'] },
            // A managed identity has no secret and no authority of its own: a secret beside it would be silently unused.
            if: { required: ['managedIdentity'], properties: { managedIdentity: { const: true } } },
            then: { properties: { tenantId: false, clientSecret: false, authorityHost: false } },
          },
          region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$', description: 'For "bedrock" (required): the AWS region, e.g. "us-east-1": the runtime endpoint https://bedrock-runtime.{region}.amazonaws.com, the control plane https://bedrock.{region}.amazonaws.com, and the SigV4 signing region. "baseUrl" overrides the runtime endpoint (a VPC endpoint, a proxy).' },
          controlPlaneUrl: { type: 'string', pattern: '^https?://', description: 'For "bedrock": the control-plane base URL the model list is read from (ListFoundationModels); default https://bedrock.{region}.amazonaws.com.' },
          accessKeyId: { type: 'string', description: 'For "bedrock": a static AWS access key id, usually "${AWS_ACCESS_KEY_ID}". Without it (or with an empty one) the standard AWS credential chain is used: environment, shared profile (AWS_PROFILE), web identity, container or instance role.' },
          secretAccessKey: { type: 'string', description: 'For "bedrock": the secret access key of accessKeyId, usually "${AWS_SECRET_ACCESS_KEY}".' },
          sessionToken: { type: 'string', description: 'For "bedrock": the session token of temporary keys, usually "${AWS_SESSION_TOKEN}".' },
          project: { type: 'string', pattern: '^[a-z][a-z0-9-]{4,28}[a-z0-9]$', description: 'For "vertex" (required): the Google Cloud project id the calls run in and are billed to, e.g. "my-project".' },
          location: { type: 'string', pattern: '^(global|[a-z]+-[a-z]+\\d+)$', description: 'For "vertex" (required): the Vertex AI location, e.g. "us-east5", "europe-west1" or "global": the endpoint https://{location}-aiplatform.googleapis.com (https://aiplatform.googleapis.com for "global"). "baseUrl" overrides the endpoint (Private Service Connect, a proxy). Claude models are served in fewer locations than Gemini models.' },
          credentialsFile: { type: 'string', minLength: 1, description: 'For "vertex": the path of a service-account key file (JSON), read on first use. Without it and without credentialsJson, Application Default Credentials are used: GOOGLE_APPLICATION_CREDENTIALS, gcloud\'s application-default login, workload identity or the metadata server.' },
          credentialsJson: { type: 'string', description: 'For "vertex": a service-account key\'s JSON text, usually "${GOOGLE_VERTEX_CREDENTIALS}"; wins over credentialsFile. A pool (apiKeys) or a user\'s own credential holds such JSON texts too.' },
          models: {
            type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[A-Za-z0-9._-]+(@[A-Za-z0-9._-]+)?$' },
            description: 'For "vertex": the model ids this project uses, listed in GET /api/v1/models as "<provider>/<model>", e.g. ["claude-sonnet-4-5@20250929", "gemini-2.5-flash"] (Vertex\'s own publisher-model list is the whole Model Garden, not what the project may call). A model not listed here can still be called by its id.',
          },
          apiKey: { type: 'string', default: '', description: 'Shared API key; "" = none (users may bring their own with `tollgate credentials set`). Use "${NAME}" to read it from the environment.' },
          apiKeys: {
            type: 'array',
            description: 'A pool of shared API keys (e.g. several accounts), with apiKey as its first key when both are set. Requests go round-robin over the keys that have room under their own rpm/tpm; a key answering 429 rests (its retry-after, else keyCooldownMs) and the attempt is retried on another key; a key the upstream refuses as a key (a 401 such as invalid_api_key, or a 403/400 the provider says is about a disabled key or account) rests for keyCooldownMs, the attempt is retried on another key, and once refused on a second model before it serves again it is disabled until an admin enables it (POST /admin/api/upstream-health/keys/{provider}/{key}/enable) or the gateway restarts; a 403 the request caused (a model the account may not use) counts against no key. For "bedrock" each key is "accessKeyId:secretAccessKey" or "accessKeyId:secretAccessKey:sessionToken". Keys are shown only by their last 4 characters. Use "${NAME}" to read each from the environment; an empty one is left out. A user\'s own credential and a deployment\'s apiKey still win.',
            items: {
              oneOf: [
                { type: 'string', description: 'The key.' },
                {
                  type: 'object',
                  additionalProperties: false,
                  required: ['key'],
                  properties: {
                    key: { type: 'string', description: 'The key.' },
                    rpm: { type: 'integer', minimum: 1, description: 'Requests per minute this key may take before the others are preferred.' },
                    tpm: { type: 'integer', minimum: 1, description: 'Tokens per minute (prompt + completion, counted when answers end) this key may take before the others are preferred.' },
                  },
                },
              ],
            },
          },
        },
      },
    },
    models: {
      type: 'object',
      default: {},
      description: 'Model names clients may ask for, in any dialect. A name here wins over the catalog. A string maps the name to one provider\'s model ("claude-sonnet-4-5": "openai/gpt-5" runs Claude Code on OpenAI); an object is a model group: {"strategy": "fallback"|"balance", "deployments": [{"provider", "model", "weight"?, "apiKey"?}]}.',
      additionalProperties: {
        oneOf: [
          { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*/.+', description: 'The model it means, as "provider/model".' },
          modelGroupSchema,
        ],
      },
    },
    providerOrder: {
      type: 'array',
      items: providerId,
      default: [],
      description: 'For a bare model id (no "provider/" prefix) that several providers list: the first provider here that lists it serves it. Without one of them, such an id answers 400 naming the candidates.',
    },
    retry: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Attempts before the first byte reached the client: on a connection failure, a timeout or a status of retryOnStatus, the next deployment of the model group is tried (then, with retriesPerDeployment, the same ones again after a backoff). Never after the first byte of an answer was sent, never for an error the request caused.',
      properties: {
        maxAttempts: { type: 'integer', minimum: 1, maximum: 20, default: 3, description: 'Attempts per client request, the first included.' },
        retriesPerDeployment: { type: 'integer', minimum: 0, maximum: 10, default: 0, description: 'Further rounds over the deployments once each was tried, each after a backoff; 0 = each deployment once (a plain model is then not retried).' },
        deadlineMs: { type: 'integer', minimum: 1, default: 60_000, description: 'No attempt starts later than this after the request arrived, in ms.' },
        backoffMs: { type: 'integer', minimum: 0, default: 250, description: 'Base of the exponential backoff before a new round, in ms; the wait is random between 0 and base × 2^(round-1) (full jitter).' },
        maxBackoffMs: { type: 'integer', minimum: 0, default: 5_000, description: 'Ceiling of one backoff, in ms.' },
        maxRetryAfterMs: { type: 'integer', minimum: 0, default: 10_000, description: 'An upstream\'s retry-after / retry-after-ms is waited for up to this, in ms; a longer one ends the retries.' },
        retryOnStatus: {
          type: 'array', items: { type: 'integer', minimum: 400, maximum: 599 }, default: [429, 500, 502, 503, 504, 529],
          description: 'Upstream HTTP statuses worth another attempt. Connection failures and timeouts before an answer always are.',
        },
      },
    },
    circuitBreaker: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Per deployment (provider + model): failureThreshold failures (no answer, a timeout, a 5xx or 529; not a 4xx, which the request or the key caused) within windowMs open its breaker: the deployment is skipped for cooldownMs while another deployment of the request is available, then one probe request goes through (half-open): its success closes the breaker, its failure opens it again. When every deployment of a request is open, the one whose cooldown ends first is tried anyway (state may be stale; the gateway never refuses on it alone). State is in memory: a restart closes every breaker.',
      properties: {
        failureThreshold: { type: 'integer', minimum: 1, default: 5, description: 'Failures within windowMs that open the breaker.' },
        windowMs: { type: 'integer', minimum: 1, default: 30_000, description: 'The window failures are counted in, ms.' },
        cooldownMs: { type: 'integer', minimum: 1, default: 30_000, description: 'How long an open breaker skips its deployment before one probe, ms.' },
      },
    },
    keyCooldownMs: {
      type: 'integer', minimum: 0, default: 60_000,
      description: 'How long a key of a pool (a provider\'s apiKeys) rests after a 429 that named no retry-after, or after the upstream refused the key itself, ms.',
    },
    catalogTtlMs: {
      type: 'integer', minimum: 1_000, default: 300_000,
      description: 'How long a discovered model list is fresh, in ms; a stale list is still served when a refresh fails.',
    },
  },
};
