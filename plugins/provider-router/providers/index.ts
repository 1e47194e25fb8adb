/**
 * Provider implementations by `type`. A manifest provider entry names one of these; its id (the
 * model prefix clients use) is the entry's key, so several `openai-compatible` upstreams can coexist.
 */
import type { UpstreamClient } from '../../../core/upstream/upstream-client.ts';
import type { Provider, ProviderSettings } from './base.ts';
import { AnthropicProvider } from './anthropic/index.ts';
import { AzureProvider } from './azure/index.ts';
import { BedrockProvider } from './bedrock/index.ts';
import { GeminiProvider } from './gemini/index.ts';
import { MistralProvider } from './mistral/index.ts';
import { OllamaProvider } from './ollama/index.ts';
import { OpenAIProvider } from './openai/index.ts';
import { OpenAICompatibleProvider } from './openai-compatible.ts';
import { VertexProvider } from './vertex/index.ts';

export type ProviderConstructor = new (id: string, settings: ProviderSettings, upstream: UpstreamClient) => Provider;

export const providerTypes: ReadonlyMap<string, ProviderConstructor> = new Map<string, ProviderConstructor>([
  ['openai', OpenAIProvider],
  ['anthropic', AnthropicProvider],
  ['gemini', GeminiProvider],
  ['mistral', MistralProvider],
  ['ollama', OllamaProvider],
  ['azure', AzureProvider],
  ['bedrock', BedrockProvider],
  ['vertex', VertexProvider],
  ['openai-compatible', OpenAICompatibleProvider],
]);
