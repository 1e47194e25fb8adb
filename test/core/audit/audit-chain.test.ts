/**
 * The audit chain under concurrency and the redaction of secrets. Two stores opened on the same
 * database stand for two gateways (on PostgreSQL: two pools, as two replicas have; on SQLite: two
 * appending at once: the chain must come out whole, one row per append, never forked. PostgreSQL only
 * (TOLLGATE_TEST_STORE=postgres): a SQLite gateway holds one connection, and two in one process would
 * wait on each other's lock on the one thread (busy_timeout) rather than test anything.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir } from '../../helpers/tmp.ts';
import { openTestStore, TEST_STORE_ENGINE } from '../../helpers/test-store.ts';
import { appendAudit } from '../../../core/audit/append.ts';
import { verifyAuditChain } from '../../../core/audit/verify.ts';
import { isSecretField, redactSecrets } from '../../../core/audit/redact.ts';

describe('concurrent appends', () => {
  test('two stores appending 40 rows each at once leave one unbroken chain of 80 rows', { skip: TEST_STORE_ENGINE === 'sqlite' && 'PostgreSQL only' }, async () => {
    const dataDir = tempDir();
    const first = await openTestStore(dataDir);
    const second = await openTestStore(dataDir);
    try {
      const append = (store: typeof first, replica: string, i: number) =>
        appendAudit(store, { actor: replica, actorKind: 'admin', role: 'admin', action: 'users.update', objectType: 'user', objectId: i, after: { n: i } });
      await Promise.all(Array.from({ length: 40 }, (_, i) => [append(first, 'replica-a', i), append(second, 'replica-b', i)]).flat());
      assert.deepEqual(await verifyAuditChain(first), { ok: true, rows: 80, firstBadId: null, reason: null });
      const rows = await first.db.selectFrom('audit_log').select(['id', 'actor', 'prev_hash']).orderBy('id').execute();
      assert.deepEqual(rows.map((r) => Number(r.id)), Array.from({ length: 80 }, (_, i) => i + 1));
      assert.equal(new Set(rows.map((r) => r.prev_hash)).size, 80);
      assert.equal(rows.filter((r) => r.actor === 'replica-a').length, 40);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('redaction', () => {
  test('fields named for a secret are redacted at any depth; fields that only point at one are kept', () => {
    const cases: Array<[string, boolean]> = [
      ['key', true], ['api_key', true], ['apiKey', true], ['client_secret', true], ['password', true], ['new_password', true],
      ['password_hash', true], ['token', true], ['refresh_token', true], ['ciphertext', true], ['key_hash', true], ['nonce', true],
      ['key_prefix', false], ['key_id', false], ['api_key_id', false], ['key_count', false], ['name', false], ['hint', false],
    ];
    for (const [name, secret] of cases) assert.equal(isSecretField(name), secret, name);
    assert.deepEqual(
      redactSecrets({ name: 'a', api_key: 'sk-1', nested: [{ token: 't', id: 1 }], key_prefix: 'tg-ab', none: null }),
      { name: 'a', api_key: '[redacted]', nested: [{ token: '[redacted]', id: 1 }], key_prefix: 'tg-ab', none: null },
    );
  });
});
