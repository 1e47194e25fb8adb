/**
 * The audit-log row of a state-changing CLI command (docs/audit.md): actor `cli:<os user>` (the
 * account that ran the command, the only identity the CLI has), no role, no address.
 */
import { userInfo } from 'node:os';
import { appendAudit } from '../core/audit/append.ts';
import type { Store } from '../core/store/store.ts';

/** `cli:<os user>`; `cli:unknown` where the OS has no name for the account (a bare container uid). */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return `cli:${process.env.USER ?? 'unknown'}`;
  }
}

/** Appends the command's row in the store it just wrote to. `before`/`after`: the object's views (secrets are redacted when stored). */
export async function auditCli(
  store: Store, action: string, object: { type: string; id: string | number | null; before?: unknown; after?: unknown },
): Promise<void> {
  await appendAudit(store, { actor: cliActor(), actorKind: 'cli', action, objectType: object.type, objectId: object.id, before: object.before, after: object.after });
}
