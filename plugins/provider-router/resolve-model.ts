/**
 * Model addressing (docs/contract.md "Providers and credentials"): `provider/model` goes to that provider
 * even if its catalog does not list the model (catalogs lag; the upstream's own "no such model" answer
 * becomes 404 `model_not_found`); a bare id resolves through the catalog (unknown → 404
 * `model_not_found`, several providers → 400 naming them). Before the catalog, the manifest's model
 * names (`models`: `"claude-sonnet-4-5": "openai/gpt-5"`) map a name to a provider's model; after it,
 * a bare id no catalog lists goes to the one provider that claims its family (`claimsModel`: Anthropic
 * claims `claude-*`), so Claude Code's bare ids work before the catalog has been fetched.
 */
import { invalidRequest, modelNotFound, unknownProviderPrefix } from '../../core/errors.ts';
import type { ProviderService } from './providers/base.ts';
import type { Catalog } from './catalog.ts';

export interface ResolvedModel {
  provider: ProviderService;
  model: string;
}

/** Resolves a request's `model` field through `aliases` (name → `provider/model`). Throws the contract's errors. */
export async function resolveModel(
  requested: string, providers: ReadonlyMap<string, ProviderService>, catalog: Catalog, aliases: Readonly<Record<string, string>> = {},
): Promise<ResolvedModel> {
  const modelField = Object.hasOwn(aliases, requested) ? aliases[requested]! : requested;
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
  const claimants = [...providers.values()].filter((provider) => provider.claimsModel(modelField));
  if (claimants.length === 1) return { provider: claimants[0]!, model: modelField };
  throw modelNotFound(modelField);
}
