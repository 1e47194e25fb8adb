/** Ollama upstream: not implemented yet (a placeholder so the registry compiles). */
import type { ChatCompletionRequest } from '../../../core/chat-types.ts';
import type { UpstreamCall } from '../../../core/upstream-call.ts';
import { ProviderService, type CatalogEntry, type ChatCallOptions, type Credential } from './base.ts';

export class OllamaProvider extends ProviderService {
  readonly name = 'Ollama';

  buildChatCall(_request: ChatCompletionRequest, _options: ChatCallOptions): UpstreamCall {
    throw new Error('not implemented');
  }

  async listModels(_credential: Credential): Promise<CatalogEntry[]> {
    throw new Error('not implemented');
  }
}
