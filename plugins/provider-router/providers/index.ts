/**
 * Provider implementations by `type`. A manifest provider entry names one of these; its id (the
 * model prefix clients use) defaults to the type.
 */
import type { UpstreamClient } from '../../../core/upstream.ts';
import type { ProviderService, ProviderSettings } from './base.ts';
import { OpenAIProvider } from './openai.ts';

export type ProviderConstructor = new (id: string, settings: ProviderSettings, upstream: UpstreamClient) => ProviderService;

export const providerTypes: ReadonlyMap<string, ProviderConstructor> = new Map<string, ProviderConstructor>([
  ['openai', OpenAIProvider],
]);
