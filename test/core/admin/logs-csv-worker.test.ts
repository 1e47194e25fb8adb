/**
 * The CSV export in its worker thread, against a store of 50,000 rows (SQLite, or PostgreSQL on
 * `TOLLGATE_TEST_STORE=postgres` runs, where the worker reads through a server-side cursor): byte for byte what
 * the main-thread export wrote (`mainThreadCsv` is that implementation's algorithm: one streaming
 * csv-stringify over every keyset page; the two were compared before it was removed), and the
 * gateway's loop keeps serving while it runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openStore, type Store } from '../../../core/store/store.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { createGatewayUser } from '../../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../../core/accounts/api-keys.ts';
import { stringify } from 'csv-stringify';
import { queryLogPage, type LogCursor, type LogFilters } from '../../../core/admin/logs-query.ts';
import { sendLogsCsv, type CsvExport } from '../../../core/admin/logs-csv.ts';
import { csvOptions } from '../../../core/admin/logs-csv-format.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { openTestStore, TEST_STORE_ENGINE } from '../../helpers/test-store.ts';

const ROWS = 50_000;
/** Cells that exercise quoting, formula guards, line breaks and non-ASCII text. */
const MODELS = ['gpt-4o', 'mo,del', 'say "hi"', '=cmd()', '-1+1', 'line\nbreak', 'cr\rhere', 'crlf\r\nx', 'ünï ✓', '@sum'];

async function seed(store: Store, users: number[], keys: number[]): Promise<void> {
  const startMs = Date.parse('2026-10-01T00:00:00.000Z');
  const rows = Array.from({ length: ROWS }, (_, i) => {
    const error = i % 17 === 0;
    return {
      request_id: `req_${i}`, gateway_user_id: i % 5 === 4 ? null : users[i % users.length]!, api_key_id: i % 7 === 0 ? null : keys[i % keys.length]!,
      provider: i % 3 === 0 ? 'openai' : 'anthropic', model_requested: MODELS[i % MODELS.length]!, model_served: error ? null : MODELS[(i + 3) % MODELS.length]!,
      status: error ? 502 : 200, error_code: error ? '+upstream,"error"' : null, prompt_tokens: error ? null : i % 997,
      completion_tokens: error ? null : i % 113, cached_tokens: i % 4 === 0 ? null : 3, latency_ms: i % 5000, ttft_ms: i % 6 === 0 ? null : i % 300,
      stream: i % 2,
      // Several rows share a timestamp, so the keyset's id tie-break matters.
      created_at: new Date(startMs + Math.floor(i / 3) * 1000).toISOString(),
      cache_write_tokens: null, cost_nanos: error ? null : i * 7, usage_estimated: i % 11 === 0 ? 1 : 0, unpriced: i % 13 === 0 ? 1 : 0,
      endpoint: i % 9 === 0 ? 'messages.create' : 'chat.completions',
    };
  });
  // Through store.db on both engines; 1,000 rows per statement (PostgreSQL's parameter limit).
  await store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('llm_requests').values(rows.slice(i, i + 1000)).execute();
  });
}

/** Users and keys with names that need quoting, then the rows: the same ids on every fresh store. */
async function fill(store: Store): Promise<number[]> {
  const users = [];
  const keys = [];
  for (const name of ['ann', 'b,o"b', '=evil']) {
    const user = await createGatewayUser(store.db, { name });
    users.push(user.id);
    const key = await createApiKey(store.db, { gatewayUserId: user.id, name: `${name} key` });
    // Prefixes are random: fixed ones make two stores' exports comparable.
    await store.db.updateTable('api_keys').set({ key_prefix: `tg_fixed${key.id}` }).where('id', '=', key.id).execute();
    keys.push(key.id);
  }
  await seed(store, users, keys);
  return users;
}

/** The main-thread export's output: every keyset page of 1000 rows through one streaming stringifier. */
async function mainThreadCsv(store: Store, filters: LogFilters): Promise<Buffer> {
  const csv = stringify(csvOptions(true));
  const parts: Buffer[] = [];
  csv.on('data', (chunk: Buffer) => parts.push(chunk));
  let cursor: LogCursor | undefined;
  for (;;) {
    const page = await queryLogPage(store, filters, { limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const row of page.rows) csv.write(row);
    const last = page.rows[page.rows.length - 1];
    if (!page.nextCursor || !last) break;
    cursor = { createdAt: last.created_at, id: last.id };
  }
  csv.end();
  await new Promise((resolve) => csv.on('end', resolve));
  return Buffer.concat(parts);
}

describe('CSV export in a worker thread', () => {
  let store: Store;
  /** On PostgreSQL runs: a SQLite store with the same rows, whose export must be the same bytes. */
  let sqliteStore: Store | undefined;
  let server: Server;
  let origin = '';
  let userId = 0;
  const lines: string[] = [];

  before(async () => {
    store = await openTestStore(tempDir());
    userId = (await fill(store))[1]!;
    const log = createLog('debug', (l) => lines.push(l));
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/ping') return void res.end('pong');
      const job: CsvExport = { store: url.pathname === '/export-sqlite' ? sqliteStore! : store, log, filters: filtersOf(url.search), requestId: 'req_csv', date: '2026-11-23' };
      void sendLogsCsv(res, job);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    if (lines.length) console.log(lines.join('\n'));
    await new Promise((resolve) => server.close(resolve));
    await store.close();
    await sqliteStore?.close();
  });

  const filtersOf = (search: string): LogFilters => {
    const query = new URLSearchParams(search);
    const filters: LogFilters = query.has('user_id') ? { userId: Number(query.get('user_id')) } : {};
    if (query.has('empty')) filters.fromIso = '2030-01-01T00:00:00.000Z';
    return filters;
  };

  const download = async (path: string) => {
    const res = await fetch(origin + path);
    assert.equal(res.status, 200);
    return { headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  test('writes every row, byte for byte what the main-thread export wrote', async () => {
    const old = await mainThreadCsv(store, {});
    const csv = await download('/export');
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(csv.headers.get('content-disposition'), 'attachment; filename="tollgate-usage-2026-11-23.csv"');
    assert.ok(csv.bytes.length > 1_000_000);
    assert.equal(csv.bytes.toString('utf8').split('\r\nreq_').length, 1, 'request ids are not the first column');
    assert.ok(csv.bytes.equals(old), `worker output (${csv.bytes.length} B) differs from the main-thread output (${old.length} B)`);
  });

  test('with a filter and with no matching row (header only), the same bytes as the main-thread export', async () => {
    for (const query of [`?user_id=${userId}`, '?empty=1']) {
      const old = await mainThreadCsv(store, filtersOf(query));
      const csv = await download(`/export${query}`);
      assert.ok(csv.bytes.equals(old), query);
    }
    assert.match((await download('/export?empty=1')).bytes.toString('utf8'), /^id,request_id,created_at,.*\r\n$/);
  });

  test('on PostgreSQL, the same rows export to the same bytes as on SQLite', { skip: TEST_STORE_ENGINE === 'sqlite' ? 'compares a PostgreSQL run with SQLite' : false }, async () => {
    sqliteStore = openStore(join(tempDir(), 'tollgate.db'));
    await fill(sqliteStore);
    for (const query of ['', `?user_id=${userId}`]) {
      const fromPostgres = await download(`/export${query}`);
      const fromSqlite = await download(`/export-sqlite${query}`);
      assert.ok(fromPostgres.bytes.length > 100_000, query);
      const postgresLines = fromPostgres.bytes.toString('utf8').split('\r\n');
      const sqliteLines = fromSqlite.bytes.toString('utf8').split('\r\n');
      const differs = postgresLines.findIndex((line, i) => line !== sqliteLines[i]);
      assert.equal(differs, -1, `line ${differs}${query}: PostgreSQL ${postgresLines[differs]} vs SQLite ${sqliteLines[differs]}`);
      assert.ok(fromPostgres.bytes.equals(fromSqlite.bytes), query);
    }
  });

  test('serves another request while an export is under way', async () => {
    const res = await fetch(`${origin}/export`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(first.value && first.value.length > 0);
    const ping = await fetch(`${origin}/ping`);
    assert.equal(await ping.text(), 'pong');
    let received = first.value!.length;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += chunk.value.length;
    assert.ok(received > 1_000_000, 'the export went on after the other request');
  });
});
