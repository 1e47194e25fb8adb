/**
 * API keys in the admin API (`docs/admin-api.md` "API keys"): a user's keys, creating one (the key in
 * clear is in that response only), revoking (the next request with the key gets 401: `notifyChange`
 * clears auth-guard's key cache in this process), and the key test (`key-test.ts`).
 */
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { idParam, numberField, objectBody, onlyFields, parseTimestamp, stringField } from './fields.ts';
import { invalidRequest, resourceNotFound } from '../errors.ts';
import { createApiKey, findApiKey, keyStatus, listApiKeys, revokeApiKey, setApiKeyTags, type ApiKeyView } from '../accounts/api-keys.ts';
import { checkKeyTags } from '../accounts/key-tags.ts';
import { nowIso } from '../store/store.ts';
import { requireUser } from './users-routes.ts';
import { testApiKey } from './key-test.ts';

/**
 * `models`: the glob patterns of the models the key may call, an array of non-empty strings; null,
 * absent or empty = every model.
 */
function modelPatternsField(body: Record<string, unknown>): string[] | null {
  const value = body.models;
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((p) => typeof p === 'string' && p.trim() !== '' && p.length <= 200) || value.length > 100) {
    throw invalidRequest('"models" must be an array of model patterns (non-empty strings, e.g. ["openai/*", "claude-*"]), or null for every model.', 'models');
  }
  const patterns = value.map((p: string) => p.trim());
  return patterns.length > 0 ? patterns : null;
}

const keyNotFound = () => resourceNotFound('key_not_found', 'No API key has this id.', 'id');

export function createKeysRoutes(ctx: AdminContext): AdminRoute[] {
  const { db } = ctx.store;

  async function requireKey(rawId: string | undefined): Promise<ApiKeyView> {
    const key = await findApiKey(db, idParam(rawId, keyNotFound), ctx.clock());
    if (!key) throw keyNotFound();
    return key;
  }

  return [
    {
      method: 'GET',
      pattern: '/admin/api/users/:id/keys',
      async handler({ params }) {
        const user = await requireUser(ctx, params.id);
        const nowMs = ctx.clock();
        const keys = await listApiKeys(db, user.id);
        // Expiry is judged on the gateway clock, as auth-guard judges it.
        return json(200, { data: keys.map((k) => ({ ...k, status: keyStatus(k, nowMs) })) });
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/users/:id/keys',
      async handler({ params, body: raw, audit }) {
        const user = await requireUser(ctx, params.id);
        const body = objectBody(raw);
        onlyFields(body, ['name', 'expires_at', 'rpm', 'tpm', 'models', 'tags']);
        const name = stringField(body, 'name', { nullable: true, maxLength: 100 });
        const expires = stringField(body, 'expires_at', { nullable: true });
        let expiresAt: string | null = null;
        if (expires) {
          const ms = parseTimestamp(expires, 'expires_at');
          if (ms <= ctx.clock()) throw invalidRequest('"expires_at" must be in the future.', 'expires_at');
          expiresAt = nowIso(ms);
        }
        const limit = { nullable: true, integer: true, min: 0, exclusiveMin: true, max: 1_000_000_000 } as const;
        const created = await createApiKey(db, {
          gatewayUserId: user.id, name: name ?? null, expiresAt,
          rpm: numberField(body, 'rpm', limit) ?? null, tpm: numberField(body, 'tpm', limit) ?? null,
          models: modelPatternsField(body),
          tags: body.tags === undefined || body.tags === null ? null : checkKeyTags(body.tags),
        });
        ctx.notifyChange();
        const view = await findApiKey(db, created.id, ctx.clock());
        // The key in clear is never stated: `view` holds its prefix only.
        audit({ action: 'keys.create', objectType: 'key', objectId: created.id, before: null, after: view });
        return json(201, { ...view, key: created.key });
      },
    },
    {
      // Only the tags change after creation: a key's name, limits and models are what it was issued with.
      method: 'PATCH',
      pattern: '/admin/api/keys/:id',
      async handler({ params, body: raw }) {
        const body = objectBody(raw);
        onlyFields(body, ['tags']);
        if (!('tags' in body)) throw invalidRequest('Send {"tags": {...}} (or null to remove them).', 'tags');
        const { id } = await requireKey(params.id);
        if (!(await setApiKeyTags(db, id, body.tags === null ? null : checkKeyTags(body.tags)))) throw keyNotFound();
        ctx.notifyChange();
        return json(200, await requireKey(params.id));
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/keys/:id/revoke',
      async handler({ params, audit }) {
        const before = await requireKey(params.id);
        const { id } = before;
        if (!(await revokeApiKey(db, id))) throw keyNotFound();
        ctx.notifyChange();
        const after = await requireKey(params.id);
        audit({ action: 'keys.revoke', objectType: 'key', objectId: id, before, after });
        return json(200, after);
      },
    },
    {
      method: 'POST',
      pattern: '/admin/api/keys/:id/test',
      // A test call through the gateway changes nothing (its request is in the usage log).
      audit: false,
      async handler({ params, body: raw }) {
        const body = objectBody(raw);
        onlyFields(body, ['model']);
        const model = stringField(body, 'model', { nullable: true, nonEmpty: true, maxLength: 200 }) ?? null;
        const { id } = await requireKey(params.id);
        return json(200, await testApiKey(ctx, id, model));
      },
    },
  ];
}
