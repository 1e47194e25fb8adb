/**
 * Who may sign in with single sign-on and as what (`oidc-roles.ts`), and what the manifest accepts
 * under `admin.oidc`: tables of cases with the exact outcome.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideSsoRole } from '../../../core/admin/oidc-roles.ts';
import type { OidcIdentity } from '../../../core/accounts/oidc-client.ts';
import { ManifestError, validateManifest, type OidcSettings } from '../../../core/manifest.ts';
import { defaultManifest } from '../../../core/default-manifest.ts';
import { pluginRegistry } from '../../../plugins/index.ts';

const settings = (extra: Partial<OidcSettings> = {}): OidcSettings => ({
  issuer: 'https://idp.example', clientId: 'c', scopes: ['openid'], roleClaim: 'groups', teamAdminPrefix: 'tg:',
  roleMapping: { admin: ['admins'], viewer: ['viewers'], teamAdmin: [] }, passwordLogin: true, ...extra,
});
const who = (claims: Record<string, unknown>, email: string | null = 'a@corp.example', emailVerified = true): OidcIdentity => ({ sub: 's', email, emailVerified, name: null, claims });

test('the highest mapped role wins; prefixed values give a team-admin its teams', () => {
  const cases: Array<[Record<string, unknown>, Partial<OidcSettings>, unknown]> = [
    [{ groups: ['admins', 'viewers', 'tg:x'] }, {}, { role: 'admin', teams: [] }],
    [{ groups: ['viewers', 'tg:search', 'tg:ads', 'tg:search'] }, {}, { role: 'team-admin', teams: ['search', 'ads'] }],
    [{ groups: ['viewers'] }, {}, { role: 'viewer', teams: [] }],
    [{ groups: 'admins' }, {}, { role: 'admin', teams: [] }],
    [{ groups: ['tg:'] }, {}, { refused: 'Your account has no Tollgate admin role (no value of claim "groups" maps to one).' }],
    // With roleMapping.teamAdmin set, a prefixed value alone is not enough.
    [{ groups: ['tg:search'] }, { roleMapping: { admin: [], viewer: [], teamAdmin: ['team-admins'] } }, { refused: 'Your account has no Tollgate admin role (no value of claim "groups" maps to one).' }],
    [{ groups: ['tg:search', 'team-admins'] }, { roleMapping: { admin: [], viewer: [], teamAdmin: ['team-admins'] } }, { role: 'team-admin', teams: ['search'] }],
    [{ roles: ['admins'] }, { roleClaim: 'roles' }, { role: 'admin', teams: [] }],
    [{ groups: ['viewers'] }, { allowedGroups: ['eng'] }, { refused: 'Your account is in none of the groups allowed to sign in to this gateway (claim "groups").' }],
  ];
  for (const [claims, extra, expected] of cases) assert.deepEqual(decideSsoRole(who(claims), settings(extra)), expected, JSON.stringify(claims));
});

test('allowedDomains needs a verified email in one of them', () => {
  const s = settings({ allowedDomains: ['Corp.example'] });
  assert.deepEqual(decideSsoRole(who({ groups: ['admins'] }), s), { role: 'admin', teams: [] });
  assert.deepEqual(decideSsoRole(who({ groups: ['admins'] }, 'a@corp.example.evil'), s), { refused: 'Accounts of corp.example.evil may not sign in to this gateway.' });
  assert.deepEqual(decideSsoRole(who({ groups: ['admins'] }, 'a@corp.example', false), s), { refused: 'Your email address a@corp.example is not verified at the identity provider.' });
  assert.deepEqual(decideSsoRole(who({ groups: ['admins'] }, null), s), { refused: 'The identity provider sent no email address for your account.' });
});

test('the manifest fills admin.oidc defaults and refuses plain http off loopback, scopes without openid, a secret name that is not a variable name', () => {
  const withOidc = (oidc: Record<string, unknown>) => ({ ...defaultManifest, admin: { oidc } });
  const ok = validateManifest(withOidc({ issuer: 'https://idp.example/realms/x', clientId: 'tollgate' }), pluginRegistry, { env: {} }).admin.oidc;
  assert.deepEqual(ok, {
    issuer: 'https://idp.example/realms/x', clientId: 'tollgate', scopes: ['openid', 'email', 'profile'], roleClaim: 'groups',
    roleMapping: { admin: [], viewer: [], teamAdmin: [] }, teamAdminPrefix: 'tollgate-team-admin:', passwordLogin: true,
  });
  assert.equal(validateManifest(withOidc({ issuer: 'http://127.0.0.1:9000', clientId: 'c' }), pluginRegistry, { env: {} }).admin.oidc?.issuer, 'http://127.0.0.1:9000');
  const refused: Array<[Record<string, unknown>, string]> = [
    [{ issuer: 'http://idp.example', clientId: 'c' }, '  /admin/oidc/issuer: must be https (plain http only on a loopback host, for local testing)'],
    [{ issuer: 'https://idp.example', clientId: 'c', scopes: ['email'] }, '  /admin/oidc/scopes: must include "openid"'],
    [{ issuer: 'https://idp.example', clientId: 'c', clientSecretEnv: 'the secret' }, '  /admin/oidc/clientSecretEnv: must match pattern "^[A-Za-z_][A-Za-z0-9_]*$"'],
    [{ issuer: 'https://idp.example' }, '  /admin/oidc/clientId: is required'],
  ];
  for (const [oidc, line] of refused) {
    assert.throws(() => validateManifest(withOidc(oidc), pluginRegistry, { env: {} }), (err: unknown) => {
      assert.ok(err instanceof ManifestError);
      assert.ok(err.message.split('\n').includes(line), err.message);
      return true;
    });
  }
});
