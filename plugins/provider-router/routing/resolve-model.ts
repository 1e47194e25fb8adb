/**
 * Model addressing (docs/contract.md "Providers and credentials"): `provider/model` goes to that provider
 * even if its catalog does not list the model (catalogs lag; the upstream's own "no such model" answer
 * becomes 404 `model_not_found`); a bare id resolves through the catalog (unknown → 404
 * `model_not_found`, several providers → the first of them in the manifest's `providerOrder`, else
 * 400 naming them). The manifest's model names and groups (`models`) are resolved before this, by the
 * router (`model-groups.ts`), each deployment's `provider/model` then coming here; after the catalog,
 * a bare id no catalog lists goes to the one provider that claims its family (`claimsModel`: Anthropic
 * claims `claude-*`), so Claude Code's bare ids work before the catalog has been fetched.
 */
import { invalidRequest, modelNotFound, unknownProviderPrefix } from '../../../core/errors.ts';
import type { Provider } from '../providers/base.ts';
import type { Catalog } from '../catalog.ts';
import type { MaybePromise } from '../../../core/runtime/maybe-promise.ts';

export interface ResolvedModel {
  provider: Provider;
  model: string;
}

/**
 * Resolves a model field (`provider/model` or a bare id). `providerOrder` picks among several
 * providers listing a bare id. Throws the contract's errors. A `provider/model` field is answered
 * synchronously, without the catalog (`catalogOf` is called only for a bare id): it is every
 * request's case once a deployment names its provider.
 */
export function resolveModel(
  modelField: string, providers: ReadonlyMap<string, Provider>, catalogOf: () => Catalog, providerOrder: readonly string[] = [],
): MaybePromise<ResolvedModel> {
  const slash = modelField.indexOf('/');
  if (slash > 0) {
    const provider = providers.get(modelField.slice(0, slash));
    if (provider) {
      const model = modelField.slice(slash + 1);
      if (!model) throw invalidRequest('The model is missing after the provider prefix, e.g. "openai/gpt-4o-mini".', 'model');
      return { provider, model };
    }
  }
  return resolveThroughCatalog(modelField, slash, providers, catalogOf(), providerOrder);
}

/** Bare ids, and ids whose first segment is not a provider (e.g. "meta-llama/Llama-3-8b"). */
async function resolveThroughCatalog(
  modelField: string, slash: number, providers: ReadonlyMap<string, Provider>, catalog: Catalog, providerOrder: readonly string[],
): Promise<ResolvedModel> {
  const candidates = await catalog.providersOf(modelField);
  if (candidates.length === 1) return { provider: providers.get(candidates[0]!)!, model: modelField };
  if (candidates.length > 1) {
    const preferred = providerOrder.find((id) => candidates.includes(id));
    if (preferred) return { provider: providers.get(preferred)!, model: modelField };
    throw invalidRequest(
      `The model "${modelField}" is offered by several providers: ${candidates.map((p) => `${p}/${modelField}`).join(', ')}. Name one, or list your preference in the router's "providerOrder".`,
      'model',
    );
  }
  if (slash > 0) throw unknownProviderPrefix(modelField.slice(0, slash), [...providers.keys()]);
  const claimants = [...providers.values()].filter((provider) => provider.claimsModel(modelField));
  if (claimants.length === 1) return { provider: claimants[0]!, model: modelField };
  throw modelNotFound(modelField);
}
