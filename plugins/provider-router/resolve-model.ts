/**
 * Model addressing (docs/contract.md "Providers and credentials"): `provider/model` goes to that provider
 * even if its catalog does not list the model (catalogs lag; the upstream's own "no such model" answer
 * becomes 404 `model_not_found`); a bare id resolves through the catalog (unknown → 404
 * `model_not_found`, several providers → 400 naming them).
 */
import { invalidRequest, modelNotFound, unknownProviderPrefix } from '../../core/errors.ts';
import type { ProviderService } from './providers/base.ts';
import type { Catalog } from './catalog.ts';

export interface ResolvedModel {
  provider: ProviderService;
  model: string;
}

/** Resolves a request's `model` field. Throws the contract's errors. */
export async function resolveModel(modelField: string, providers: ReadonlyMap<string, ProviderService>, catalog: Catalog): Promise<ResolvedModel> {
  const slash = modelField.indexOf('/');
  if (slash > 0) {
    const provider = providers.get(modelField.slice(0, slash));
    if (provider) {
      const model = modelField.slice(slash + 1);
      if (!model) throw invalidRequest('The model is missing after the provider prefix, e.g. "openai/gpt-4o-mini".', 'model');
      return { provider, model };
    }
  }
  // Bare ids, and ids whose first segment is not a provider (e.g. "meta-llama/Llama-3-8b").
  const candidates = await catalog.providersOf(modelField);
  if (candidates.length === 1) return { provider: providers.get(candidates[0]!)!, model: modelField };
  if (candidates.length > 1) {
    throw invalidRequest(
      `The model "${modelField}" is offered by several providers: ${candidates.map((p) => `${p}/${modelField}`).join(', ')}. Name one.`,
      'model',
    );
  }
  if (slash > 0) throw unknownProviderPrefix(modelField.slice(0, slash), [...providers.keys()]);
  throw modelNotFound(modelField);
}
