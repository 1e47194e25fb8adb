/**
 * `/admin/api/upstream-health` (`docs/admin-api.md`, "Upstream health"): the router's circuit
 * breakers and key pools as the `upstreamHealth` service reports them, and the admin action that
 * puts a disabled (or cooling) pooled key back into use. Keys appear only by their fingerprint.
 */
import { json, type AdminContext, type AdminRoute } from './context.ts';
import { resourceNotFound } from '../errors.ts';

export function createUpstreamHealthRoutes(ctx: AdminContext): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: '/admin/api/upstream-health',
      // Without the router in the manifest there is nothing to report, not an error.
      handler: () => json(200, ctx.services.get('upstreamHealth')?.snapshot() ?? { deployments: [], keys: [] }),
    },
    {
      method: 'POST',
      pattern: '/admin/api/upstream-health/keys/:provider/:key/enable',
      handler: ({ params, admin, audit }) => {
        const health = ctx.services.get('upstreamHealth');
        const provider = params.provider!;
        const key = params.key!;
        const before = health?.snapshot().keys.find((k) => k.provider === provider && k.key === key) ?? null;
        if (!health?.enableKey(provider, key)) {
          throw resourceNotFound('upstream_key_not_found', `Provider "${provider}" has no pooled key "${key}". GET /admin/api/upstream-health lists the keys by fingerprint.`, 'key');
        }
        ctx.log.info('admin enabled a pooled provider key', { provider, key, admin: admin?.username });
        const state = health.snapshot().keys.find((k) => k.provider === provider && k.key === key)!;
        audit({ action: 'upstream_keys.enable', objectType: 'upstream_key', objectId: `${provider}/${key}`, before, after: state });
        return json(200, state);
      },
    },
  ];
}
