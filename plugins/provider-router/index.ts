/**
 * provider-router: the terminal plugin. Resolves the request's `model` to a provider and upstream
 * model, picks the credential, sets `ex.target` and returns the provider's `UpstreamCall`. It also
 * answers `GET /v1/models` from the discovered catalog, with `provider/model` ids.
 *
 * Model addressing (CONTRACT.md "Providers and credentials"): `provider/model` goes to that provider
 * even if its catalog does not list the model; a bare id resolves through the catalog (unknown → 404
 * `model_not_found`, several providers → 400 naming them).
 */
import type { Plugin, PluginContext, PluginFactory } from '../../core/plugin.ts';
import { reply } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { invalidRequest, modelNotFound, providerNotConfigured, unknownProviderPrefix } from '../../core/errors.ts';
import type { ProviderService } from './providers/base.ts';
import { providerTypes } from './providers/index.ts';
import { createCatalog, type Catalog } from './catalog.ts';
import { providerRouterSchema, type ProviderRouterConfig } from './schema.ts';

export interface ResolvedModel {
  provider: ProviderService;
  model: string;
}

/** Resolves a request's `model` field (see module doc). Throws the contract's errors. */
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

function createProviderRouter(config: ProviderRouterConfig, ctx: PluginContext): Plugin {
  const upstream = ctx.upstream;
  const providers = new Map<string, ProviderService>();
  for (const [id, settings] of Object.entries(config.providers)) {
    const Provider = providerTypes.get(settings.type)!;
    providers.set(id, new Provider(id, settings, upstream));
  }
  const catalog = createCatalog(providers, config.catalogTtlMs, ctx.log);

  async function listModels() {
    const lists = await catalog.all();
    const data = lists.flatMap(({ provider, models }) =>
      models.map((m) => ({ id: `${provider}/${m.id}`, object: 'model', created: m.created, owned_by: m.owned_by })),
    );
    return reply(200, { object: 'list', data });
  }

  return {
    name: 'provider-router',
    async route(ex: Exchange) {
      if (ex.operation === 'models.list') return listModels();
      const request = ex.body!;
      const { provider, model } = await resolveModel(request.model, providers, catalog);
      const credential = provider.sharedCredential();
      if (!credential) throw providerNotConfigured(provider.id);
      ex.target = { provider: provider.id, model };
      return provider.buildChatCall(request, { model, credential });
    },
  };
}

export const providerRouter: PluginFactory<ProviderRouterConfig> = {
  name: 'provider-router',
  description: 'Routes each request to its provider and model (terminal: listed last).',
  configSchema: providerRouterSchema,
  terminal: true,
  create: createProviderRouter,
};
