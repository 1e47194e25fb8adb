/**
 * The bodies of the model and provider endpoints the router answers itself:
 * `GET /api/v1/models` (OpenAI's list shape), `GET /api/models` (with display names) and
 * `GET /api/providers/{provider}`. Every model name shown comes from `getModelDisplayName`.
 */
import type { CatalogEntry, Credential, ProviderService } from './providers/base.ts';
import { getModelDisplayName } from './model-display-name.ts';

type Lists = Array<{ provider: string; models: CatalogEntry[] }>;

/** OpenAI `GET /v1/models`: `{object:"list", data:[{id:"provider/model", object:"model", created, owned_by}]}`. */
export function openAIModelList(lists: Lists) {
  const data = lists.flatMap(({ provider, models }) =>
    models.map((m) => ({ id: `${provider}/${m.id}`, object: 'model', created: m.created, owned_by: m.owned_by })),
  );
  return { object: 'list', data };
}

/** One model as `GET /api/models` and `GET /api/providers/{provider}` show it. */
export function modelView(provider: string, m: CatalogEntry) {
  return {
    id: `${provider}/${m.id}`,
    object: 'model',
    provider,
    model: m.id,
    display_name: getModelDisplayName(m),
    created: m.created,
    owned_by: m.owned_by,
  };
}

/** `GET /api/models`: `{object:"list", data:[modelView...]}`. */
export function modelCatalog(lists: Lists) {
  return { object: 'list', data: lists.flatMap(({ provider, models }) => models.map((m) => modelView(provider, m))) };
}

/**
 * `GET /api/providers/{provider}`: the provider, whether the caller can use it and with whose
 * credential (`user` = their own, `shared` = the gateway's), and its models (empty when listing
 * failed; the server log says why).
 */
export function providerView(provider: ProviderService, credential: Credential | null, models: CatalogEntry[]) {
  return {
    id: provider.id,
    object: 'provider',
    name: provider.name,
    configured: credential !== null,
    credential_source: credential?.source ?? null,
    models: models.map((m) => modelView(provider.id, m)),
  };
}
