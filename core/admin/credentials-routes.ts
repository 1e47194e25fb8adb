/**
 * Per-user provider credentials in the admin API (`docs/admin-api.md` "Provider credentials"): list,
 * read, set or replace, delete, test. Keys are sealed under the master key on write
 * (`core/accounts/provider-credentials.ts`) and only ever shown masked (`hint`). The provider ids and the test
 * come from the router's `providers` service, so this file knows no provider.
 */
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { objectBody, onlyFields, stringField } from './fields.ts';
import { invalidRequest, providerNotFound, resourceNotFound } from '../errors.ts';
import {
  deleteProviderCredential, findProviderCredential, listProviderCredentials, setProviderCredential, type ProviderCredentialView,
} from '../accounts/provider-credentials.ts';
import { requireUser } from './users-routes.ts';

/** The credential object of the admin API: never the key, nor which master key sealed it. */
export interface AdminCredential {
  provider: string;
  /** Masked key, e.g. `sk-…7f3a`. */
  hint: string;
  base_url: string | null;
  created_at: string;
  updated_at: string;
}

function toAdminCredential(view: ProviderCredentialView): AdminCredential {
  return { provider: view.provider, hint: view.hint, base_url: view.base_url, created_at: view.created_at, updated_at: view.updated_at };
}

const credentialNotFound = (provider: string) =>
  resourceNotFound('credential_not_found', `This user has no credential for provider "${provider}".`, 'provider');

/** `base_url` must be an absolute http(s) URL; returned without trailing slashes. */
function readBaseUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest('"base_url" must be an absolute URL such as https://api.example.com/v1.', 'base_url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidRequest('"base_url" must start with http:// or https://.', 'base_url');
  return value.replace(/\/+$/, '');
}

export function createCredentialsRoutes(ctx: AdminContext): AdminRoute[] {
  const { db } = ctx.store;

  /** The `:provider` path parameter, known to the router; 404 `provider_not_found` otherwise. */
  function requireProvider(provider: string | undefined): string {
    const known = ctx.services.get('providers')?.list().map((p) => p.id) ?? [];
    if (!provider || !known.includes(provider)) throw providerNotFound(provider ?? '', known);
    return provider;
  }

  const written = (userId: number) => {
    ctx.notifyChange();
    ctx.services.get('providers')?.invalidateCredentials(userId);
  };

  return [
    {
      method: 'GET',
      pattern: '/admin/api/users/:id/credentials',
      async handler({ params }) {
        const user = await requireUser(ctx, params.id);
        return json(200, { data: (await listProviderCredentials(db, user.id)).map(toAdminCredential) });
      },
    },
    {
      method: 'GET',
      pattern: '/admin/api/users/:id/credentials/:provider',
      async handler({ params }) {
        const user = await requireUser(ctx, params.id);
        const provider = requireProvider(params.provider);
        const credential = await findProviderCredential(db, user.id, provider);
        if (!credential) throw credentialNotFound(provider);
        return json(200, toAdminCredential(credential));
      },
    },
    {
      method: 'PUT',
      pattern: '/admin/api/users/:id/credentials/:provider',
      async handler({ params, body: raw, audit }) {
        const user = await requireUser(ctx, params.id);
        const provider = requireProvider(params.provider);
        const previous = await findProviderCredential(db, user.id, provider);
        const body = objectBody(raw);
        onlyFields(body, ['api_key', 'base_url']);
        const apiKey = stringField(body, 'api_key', { required: true, maxLength: 4096 });
        const baseUrl = readBaseUrl(stringField(body, 'base_url', { nullable: true, maxLength: 2048 }));
        const credential = await setProviderCredential(db, ctx.keyring.get(), { gatewayUserId: user.id, provider, apiKey, baseUrl });
        written(user.id);
        // Only the masked view is stated: the key itself never reaches the audit log.
        audit({
          action: 'credentials.set', objectType: 'credential', objectId: `${user.id}/${provider}`,
          before: previous ? toAdminCredential(previous) : null, after: toAdminCredential(credential),
        });
        return json(200, toAdminCredential(credential));
      },
    },
    {
      method: 'DELETE',
      pattern: '/admin/api/users/:id/credentials/:provider',
      async handler({ params, audit }) {
        const user = await requireUser(ctx, params.id);
        const provider = requireProvider(params.provider);
        const previous = await findProviderCredential(db, user.id, provider);
        if (!previous || !(await deleteProviderCredential(db, user.id, provider))) throw credentialNotFound(provider);
        written(user.id);
        audit({ action: 'credentials.delete', objectType: 'credential', objectId: `${user.id}/${provider}`, before: toAdminCredential(previous), after: null });
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/users/:id/credentials/:provider/test',
      audit: false,
      async handler({ params }) {
        const user = await requireUser(ctx, params.id);
        const provider = requireProvider(params.provider);
        const providers = ctx.services.get('providers')!;
        // Checked here too, so the 404 names the parameter like the other routes.
        if (!(await findProviderCredential(db, user.id, provider))) throw credentialNotFound(provider);
        return json(200, await providers.testCredential(user.id, provider));
      },
    },
  ];
}
