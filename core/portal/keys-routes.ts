/**
 * A gateway user's own API keys in the portal (docs/portal.md "Keys"): list, create (the key in clear
 * is in that response only), rename, revoke. Every query is scoped to the session's user, so another
 * user's key id answers 404 `key_not_found` exactly like an id that does not exist: the portal never
 * reveals whether someone else's key exists. A portal key has no allow-list nor limits of its own
 * (the user's budget and limits apply); an admin may add them later.
 */
import { invalidRequest, resourceNotFound } from '../errors.ts';
import { createApiKey, keyStatus, listApiKeys, parseModelsColumn } from '../accounts/api-keys.ts';
import { nowIso, type Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import { idParam, objectBody, onlyFields, stringField } from '../admin/fields.ts';
import type { PortalRoute } from './router.ts';

/** Most keys a user may hold unrevoked at once through the portal. */
export const MAX_ACTIVE_PORTAL_KEYS = 50;
const KEY_COLUMNS = ['id', 'name', 'key_prefix', 'created_at', 'expires_at', 'revoked_at', 'last_used_at', 'models'] as const;

export interface PortalKeysDeps {
  store: Store;
  clock: Clock;
  /** Tells the caches (auth-guard's keys) that a key changed; after every write. */
  notifyChange(): void;
}

const keyNotFound = () => resourceNotFound('key_not_found', 'You have no API key with this id.', 'id');

export function createPortalKeysRoutes(deps: PortalKeysDeps): PortalRoute[] {
  const { db } = deps.store;

  /** Key `rawId` of user `userId` as listed, or 404 (also when it is another user's). */
  async function ownKey(userId: number, rawId: string | undefined) {
    const row = await db.selectFrom('api_keys').select(KEY_COLUMNS)
      .where('id', '=', idParam(rawId, keyNotFound)).where('gateway_user_id', '=', userId)
      .executeTakeFirst();
    if (!row) throw keyNotFound();
    return { ...row, models: parseModelsColumn(row.models), status: keyStatus(row, deps.clock()) };
  }

  const nameOf = (raw: unknown) => {
    const body = objectBody(raw);
    onlyFields(body, ['name']);
    return stringField(body, 'name', { required: true, nonEmpty: true, maxLength: 100 }).trim();
  };

  return [
    {
      method: 'GET',
      pattern: '/portal/api/keys',
      async handler({ userId }) {
        const nowMs = deps.clock();
        const keys = await listApiKeys(db, userId!);
        // Neither the user id nor the per-key limits: the portal shows the user their keys, nothing more.
        return { status: 200, body: { data: keys.map((k) => ({ id: k.id, name: k.name, key_prefix: k.key_prefix, created_at: k.created_at, expires_at: k.expires_at, revoked_at: k.revoked_at, last_used_at: k.last_used_at, models: k.models, status: keyStatus(k, nowMs) })) } };
      },
    },
    {
      method: 'POST',
      pattern: '/portal/api/keys',
      async handler({ userId, body }) {
        const name = nameOf(body);
        const active = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('gateway_user_id', '=', userId!).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
        if (Number(active.n) >= MAX_ACTIVE_PORTAL_KEYS) {
          throw invalidRequest(`You have ${MAX_ACTIVE_PORTAL_KEYS} keys that are not revoked; revoke one you no longer use first.`);
        }
        const created = await createApiKey(db, { gatewayUserId: userId!, name });
        deps.notifyChange();
        return { status: 201, body: { ...(await ownKey(userId!, String(created.id))), key: created.key } };
      },
    },
    {
      method: 'PATCH',
      pattern: '/portal/api/keys/:id',
      async handler({ userId, params, body }) {
        const name = nameOf(body);
        const { id } = await ownKey(userId!, params.id);
        await db.updateTable('api_keys').set({ name }).where('id', '=', id).where('gateway_user_id', '=', userId!).execute();
        return { status: 200, body: await ownKey(userId!, params.id) };
      },
    },
    {
      method: 'DELETE',
      pattern: '/portal/api/keys/:id',
      async handler({ userId, params }) {
        const { id } = await ownKey(userId!, params.id);
        // Revoking twice keeps the first time.
        await db.updateTable('api_keys').set({ revoked_at: nowIso(deps.clock()) })
          .where('id', '=', id).where('gateway_user_id', '=', userId!).where('revoked_at', 'is', null).execute();
        deps.notifyChange();
        return { status: 200, body: await ownKey(userId!, params.id) };
      },
    },
  ];
}
