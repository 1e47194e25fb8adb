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
import type { PortalRequest, PortalRoute } from './router.ts';
import type { Log } from '../runtime/log.ts';
import { appendAudit } from '../audit/append.ts';

/** Most keys a user may hold unrevoked at once through the portal. */
export const MAX_ACTIVE_PORTAL_KEYS = 50;
const KEY_COLUMNS = ['id', 'name', 'key_prefix', 'created_at', 'expires_at', 'revoked_at', 'last_used_at', 'models'] as const;

export interface PortalKeysDeps {
  store: Store;
  clock: Clock;
  /** Tells the caches (auth-guard's keys) that a key changed; after every write. */
  notifyChange(): void;
  log: Log;
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

  /**
   * The audit-log row of a key the user changed (docs/audit.md): actor = the user's email (else name),
   * kind `portal`. The change is made already, so a failed write is logged with the entry, not answered.
   */
  async function audit(request: PortalRequest, action: string, keyId: number, before: unknown, after: unknown): Promise<void> {
    const user = await db.selectFrom('gateway_users').select(['name', 'email']).where('id', '=', request.userId!).executeTakeFirst();
    const entry = {
      actor: user?.email ?? user?.name ?? `user:${request.userId}`, actorKind: 'portal' as const, ip: request.req.socket.remoteAddress ?? null,
      action, objectType: 'key', objectId: keyId, before, after, requestId: request.requestId,
    };
    try {
      await appendAudit(deps.store, entry, deps.clock());
    } catch (err) {
      deps.log.error('portal: could not write the audit-log row', { requestId: request.requestId, action, actor: entry.actor, objectId: keyId, err });
    }
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
      async handler(request) {
        const { userId, body } = request;
        const name = nameOf(body);
        const active = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('gateway_user_id', '=', userId!).where('revoked_at', 'is', null).executeTakeFirstOrThrow();
        if (Number(active.n) >= MAX_ACTIVE_PORTAL_KEYS) {
          throw invalidRequest(`You have ${MAX_ACTIVE_PORTAL_KEYS} keys that are not revoked; revoke one you no longer use first.`);
        }
        const created = await createApiKey(db, { gatewayUserId: userId!, name });
        deps.notifyChange();
        const view = await ownKey(userId!, String(created.id));
        await audit(request, 'keys.create', created.id, null, view);
        return { status: 201, body: { ...view, key: created.key } };
      },
    },
    {
      method: 'PATCH',
      pattern: '/portal/api/keys/:id',
      async handler(request) {
        const { userId, params, body } = request;
        const name = nameOf(body);
        const before = await ownKey(userId!, params.id);
        await db.updateTable('api_keys').set({ name }).where('id', '=', before.id).where('gateway_user_id', '=', userId!).execute();
        const after = await ownKey(userId!, params.id);
        await audit(request, 'keys.update', before.id, before, after);
        return { status: 200, body: after };
      },
    },
    {
      method: 'DELETE',
      pattern: '/portal/api/keys/:id',
      async handler(request) {
        const { userId, params } = request;
        const before = await ownKey(userId!, params.id);
        // Revoking twice keeps the first time.
        await db.updateTable('api_keys').set({ revoked_at: nowIso(deps.clock()) })
          .where('id', '=', before.id).where('gateway_user_id', '=', userId!).where('revoked_at', 'is', null).execute();
        deps.notifyChange();
        const after = await ownKey(userId!, params.id);
        if (before.revoked_at === null) await audit(request, 'keys.revoke', before.id, before, after);
        return { status: 200, body: after };
      },
    },
  ];
}
