/**
 * Who may sign in with single sign-on, and as what (README "Single sign-on"; manifest `admin.oidc`).
 * The identity must pass every configured filter: `allowedDomains` (a verified email in one of them)
 * and `allowedGroups` (one of them among the `roleClaim` values). The role is the highest one a
 * `roleClaim` value maps to: `admin`, then `team-admin`, then `viewer`. A team-admin's teams are the
 * values `<teamAdminPrefix><team>`. With `roleMapping.teamAdmin` empty such a value alone makes a
 * team-admin; when it lists values, one of them is needed too. Either way at least one team is (a
 * team-admin of no team could do nothing). No role: refused.
 */
import type { OidcSettings } from '../manifest.ts';
import type { OidcIdentity } from '../accounts/oidc-client.ts';
import type { AdminRole } from './context.ts';

export type SsoDecision = { role: AdminRole; teams: string[] } | { refused: string };

/** The values of claim `name`: an array's strings, or a single string. */
export function claimValues(claims: Readonly<Record<string, unknown>>, name: string): string[] {
  const value = claims[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Whether `identity` may sign in, and its role and teams; `refused` says why, for the person signing in. */
export function decideSsoRole(identity: OidcIdentity, settings: OidcSettings): SsoDecision {
  if (!identity.email) return { refused: 'The identity provider sent no email address for your account.' };
  if (settings.allowedDomains) {
    const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
    if (!identity.emailVerified) return { refused: `Your email address ${identity.email} is not verified at the identity provider.` };
    if (!settings.allowedDomains.some((d) => d.toLowerCase() === domain)) return { refused: `Accounts of ${domain} may not sign in to this gateway.` };
  }
  const values = claimValues(identity.claims, settings.roleClaim);
  if (settings.allowedGroups && !settings.allowedGroups.some((g) => values.includes(g))) {
    return { refused: `Your account is in none of the groups allowed to sign in to this gateway (claim "${settings.roleClaim}").` };
  }
  const { roleMapping: mapping, teamAdminPrefix: prefix } = settings;
  if (values.some((v) => mapping.admin.includes(v))) return { role: 'admin', teams: [] };
  const teams = [...new Set(values.filter((v) => v.startsWith(prefix) && v.length > prefix.length).map((v) => v.slice(prefix.length)))];
  const teamAdminGranted = mapping.teamAdmin.length === 0 || values.some((v) => mapping.teamAdmin.includes(v));
  if (teams.length > 0 && teamAdminGranted) return { role: 'team-admin', teams };
  if (values.some((v) => mapping.viewer.includes(v))) return { role: 'viewer', teams: [] };
  return { refused: `Your account has no Tollgate admin role (no value of claim "${settings.roleClaim}" maps to one).` };
}
