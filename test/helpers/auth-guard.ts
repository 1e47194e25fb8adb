/** Calling auth-guard's request hook directly, as the pipeline would, for tests of the plugin itself. */
import assert from 'node:assert/strict';
import type { Plugin } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { GatewayError } from '../../core/errors.ts';

/** The status auth-guard refuses `token` (sent as `Bearer`) with at `startedAtMs`, or null when it admits it. */
export async function authRefusal(plugin: Plugin<unknown>, token: string, startedAtMs: number): Promise<number | null> {
  const ex = { headers: { authorization: `Bearer ${token}` }, startedAtMs } as unknown as Exchange;
  try {
    await plugin.onRequest!(ex, undefined);
    return null;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err.status;
  }
}
