-- Tollgate's only DDL. Each "-- version: N" section is a migration applied once, in order,
-- when PRAGMA user_version < N. Later changes append a new section; shipped sections never change.
--
-- PostgreSQL (several replicas, core/store/store-postgres.ts) starts at the "-- postgres baseline: 13"
-- section at the end: the whole schema of version 13 in PostgreSQL's terms, applied as one migration.
-- Every version after 13 has its SQLite text, then a "-- postgres:" line and the same change for
-- PostgreSQL (core/store/store.ts `readMigrations` refuses a version without it). PostgreSQL keeps the same
-- column types as SQLite sees them: integers as bigint (read back as JS numbers), 0/1 flags as smallint,
-- times as ISO-8601 text with the "C" collation (byte order, as SQLite's BINARY), BLOB as bytea.

-- version: 1
CREATE TABLE gateway_users (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  email TEXT,
  disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  -- Budget limit in micro-USD (1 USD = 1,000,000); NULL means unlimited.
  budget_limit_micros INTEGER CHECK (budget_limit_micros IS NULL OR budget_limit_micros >= 0),
  budget_period TEXT NOT NULL DEFAULT 'monthly' CHECK (budget_period IN ('daily', 'weekly', 'monthly', 'never')),
  -- Requests and tokens per minute; NULL means the manifest default applies.
  rpm INTEGER CHECK (rpm IS NULL OR rpm > 0),
  tpm INTEGER CHECK (tpm IS NULL OR tpm > 0),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  gateway_user_id INTEGER NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  name TEXT,
  -- SHA-256 of the whole key, lowercase hex. The key itself is never stored.
  key_hash TEXT NOT NULL UNIQUE,
  -- What an operator sees to tell keys apart, e.g. "tg_AbCdEfGh".
  key_prefix TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  last_used_at TEXT
) STRICT;
CREATE INDEX api_keys_by_user ON api_keys (gateway_user_id);

CREATE TABLE admin_users (
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE,
  -- scrypt$N$r$p$salt_b64$hash_b64
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE llm_requests (
  id INTEGER PRIMARY KEY,
  request_id TEXT NOT NULL UNIQUE,
  -- A request always belongs to a gateway user, never to an admin. SET NULL keeps history when a user is deleted.
  gateway_user_id INTEGER REFERENCES gateway_users (id) ON DELETE SET NULL,
  api_key_id INTEGER REFERENCES api_keys (id) ON DELETE SET NULL,
  provider TEXT,
  model_requested TEXT,
  model_served TEXT,
  status INTEGER NOT NULL,
  error_code TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cached_tokens INTEGER,
  latency_ms INTEGER NOT NULL,
  ttft_ms INTEGER,
  stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX llm_requests_by_time ON llm_requests (created_at, id);
CREATE INDEX llm_requests_by_user_time ON llm_requests (gateway_user_id, created_at);

CREATE TABLE model_pricing (
  model TEXT NOT NULL UNIQUE,
  provider TEXT,
  -- USD per million tokens. Prices are rates, not sums: costs are computed as integer micro-USD.
  input_price_per_million REAL NOT NULL CHECK (input_price_per_million >= 0),
  output_price_per_million REAL NOT NULL CHECK (output_price_per_million >= 0),
  cached_input_price_per_million REAL CHECK (cached_input_price_per_million >= 0),
  source TEXT NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'import')),
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE provider_credentials (
  id INTEGER PRIMARY KEY,
  -- NULL = a shared (gateway-wide) credential.
  gateway_user_id INTEGER REFERENCES gateway_users (id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  -- AES-256-GCM: ciphertext, 12-byte nonce, 16-byte tag, and which master key encrypted it.
  ciphertext BLOB NOT NULL,
  nonce BLOB NOT NULL,
  auth_tag BLOB NOT NULL,
  key_id TEXT NOT NULL,
  hint TEXT NOT NULL,
  base_url TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (gateway_user_id, provider)
) STRICT;

-- version: 2
-- The discovered model catalog, persisted so a restart with an upstream down still knows its models.
CREATE TABLE model_catalog (
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  -- The upstream's own display name (Anthropic display_name, Gemini displayName); NULL when it has none.
  display_name TEXT,
  -- Unix seconds, 0 when the provider does not say.
  created INTEGER NOT NULL DEFAULT 0,
  owned_by TEXT NOT NULL,
  -- When this provider's list was fetched (ISO-8601 UTC).
  fetched_at TEXT NOT NULL,
  PRIMARY KEY (provider, model)
) STRICT;

-- version: 3
-- Budgets, rate limits, pricing and cost (money as integer nano-USD: 1 USD = 1,000,000,000, so a
-- request of one token at $0.15 per million costs exactly 150 and sums never drift).
-- Spend of the budget period that starts at budget_period_start (ISO-8601 UTC; NULL = nothing spent
-- yet). A period that has ended counts as 0, lazily: no job resets it.
ALTER TABLE gateway_users ADD COLUMN budget_spent_nanos INTEGER NOT NULL DEFAULT 0 CHECK (budget_spent_nanos >= 0);
ALTER TABLE gateway_users ADD COLUMN budget_period_start TEXT;
-- Optional per-key limits, applied on top of the user's.
ALTER TABLE api_keys ADD COLUMN rpm INTEGER CHECK (rpm IS NULL OR rpm > 0);
ALTER TABLE api_keys ADD COLUMN tpm INTEGER CHECK (tpm IS NULL OR tpm > 0);
ALTER TABLE llm_requests ADD COLUMN cache_write_tokens INTEGER;
-- NULL when nothing was billed (a denial, an upstream error); 0 with unpriced = 1 for a model without a price.
ALTER TABLE llm_requests ADD COLUMN cost_nanos INTEGER;
-- 1 when the token counts were counted locally (no usage from the upstream, or the client left mid-stream).
ALTER TABLE llm_requests ADD COLUMN usage_estimated INTEGER NOT NULL DEFAULT 0 CHECK (usage_estimated IN (0, 1));
ALTER TABLE llm_requests ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0 CHECK (unpriced IN (0, 1));
ALTER TABLE model_pricing ADD COLUMN cache_write_price_per_million REAL CHECK (cache_write_price_per_million >= 0);
CREATE INDEX llm_requests_unpriced ON llm_requests (model_served) WHERE unpriced = 1;

-- version: 4
-- Admin web UI sessions. The cookie carries a random token; only its SHA-256 is stored, so a copy of
-- the database cannot be used to log in. A session ends at expires_at (absolute) or after the idle
-- timeout counted from last_seen_at, whichever comes first.
CREATE TABLE admin_sessions (
  token_hash TEXT PRIMARY KEY,
  admin_user_id INTEGER NOT NULL REFERENCES admin_users (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ip TEXT,
  user_agent TEXT
) STRICT;
CREATE INDEX admin_sessions_by_admin ON admin_sessions (admin_user_id);
-- Usage-log filters page newest first by (created_at, id); rowid (= id) ends every index.
CREATE INDEX llm_requests_by_key_time ON llm_requests (api_key_id, created_at);
CREATE INDEX llm_requests_by_provider_time ON llm_requests (provider, created_at);
CREATE INDEX llm_requests_by_model_requested_time ON llm_requests (model_requested, created_at);
CREATE INDEX llm_requests_by_model_served_time ON llm_requests (model_served, created_at);

-- version: 5
-- The endpoint (dialect operation) a request came through: chat.completions, messages.create, ...
-- Every earlier row was a chat completion.
ALTER TABLE llm_requests ADD COLUMN endpoint TEXT;
UPDATE llm_requests SET endpoint = 'chat.completions';

-- version: 6
-- Routing and failover (docs/routing.md).
-- Every upstream attempt of a request, oldest first, as a JSON array of
-- {"provider","model","status","errorCode","latencyMs"}; NULL when nothing was dispatched.
ALTER TABLE llm_requests ADD COLUMN attempts TEXT;
-- The models a key may call, as a JSON array of glob patterns ("openai/*", "claude-*", a group name); NULL = all.
ALTER TABLE api_keys ADD COLUMN models TEXT;

-- version: 7
-- Requests in flight at once per gateway user (rate-limit plugin); NULL = the manifest default.
ALTER TABLE gateway_users ADD COLUMN max_concurrent INTEGER CHECK (max_concurrent > 0);

-- version: 8
-- OpenAI Responses kept by the gateway (plugin response-store), for previous_response_id on any
-- provider and GET /api/v1/responses/{id}. One row per stored response, owned by the gateway user who
-- created it. The id is the one the client saw (the gateway's resp_..., or the native upstream's own):
-- an upstream's ids are not the gateway's to make unique, so the key is per user.
CREATE TABLE responses (
  gateway_user_id INTEGER NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- Removed by the background sweep after this instant (ISO-8601 UTC); unreadable from then on.
  expires_at TEXT NOT NULL,
  -- The model as the client named it, and the provider that served it.
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  -- 1 when the upstream stored it itself (native pass-through whose response says store: true), so a
  -- continuation passed through to the same provider can name it there unchanged.
  served_natively INTEGER NOT NULL CHECK (served_natively IN (0, 1)),
  previous_response_id TEXT,
  -- JSON array: the request's own input items (a string input as one user message item).
  input_items TEXT NOT NULL,
  -- JSON: the final response object, as the client received it.
  response TEXT NOT NULL,
  PRIMARY KEY (gateway_user_id, id)
) STRICT;
CREATE INDEX responses_by_expiry ON responses (expires_at);

-- version: 9
-- Usage per UTC quarter hour, user, provider and model, kept in the same transaction as each llm_requests
-- row (by a trigger until v11, by the writer since), so the dashboard and GET /api/account sum a few thousand rows instead of
-- scanning the log. Quarter hours because every time zone's offset is a multiple of 15 minutes: a
-- local midnight (a day, a budget period) always starts a quarter. Sentinels instead of NULL keep the
-- key unique: gateway_user_id 0 = no user, '' = no provider / model. Deleting a user moves their usage
-- to user 0 (the trigger below), as llm_requests' ON DELETE SET NULL does: it stays in the totals and
-- never passes to a later user who gets the same id.
CREATE TABLE usage_rollups (
  bucket_start TEXT NOT NULL,
  gateway_user_id INTEGER NOT NULL,
  provider TEXT NOT NULL,
  model_requested TEXT NOT NULL,
  model_served TEXT NOT NULL,
  requests INTEGER NOT NULL,
  -- Rows with status >= 400 (until version 16; since, what the gateway or an upstream failed: see version 16).
  errors INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  -- Integer nano-USD (NULL costs count as 0).
  cost_nanos INTEGER NOT NULL,
  -- Rows that have a time to first token.
  ttft_count INTEGER NOT NULL,
  -- Rows logged with unpriced = 1, and the latest one's created_at.
  unpriced_requests INTEGER NOT NULL,
  last_unpriced_at TEXT,
  PRIMARY KEY (bucket_start, gateway_user_id, provider, model_requested, model_served)
) STRICT, WITHOUT ROWID;
-- Covers GET /api/account's sums (one user since the start of the budget period): an index range, no table lookups.
CREATE INDEX usage_rollups_by_user ON usage_rollups (gateway_user_id, bucket_start, requests, prompt_tokens, completion_tokens, cost_nanos);

CREATE TRIGGER llm_requests_rollup AFTER INSERT ON llm_requests BEGIN
  INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
      prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
    VALUES (substr(NEW.created_at, 1, 14) || printf('%02d', (CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z',
      coalesce(NEW.gateway_user_id, 0), coalesce(NEW.provider, ''), coalesce(NEW.model_requested, ''), coalesce(NEW.model_served, ''),
      1, NEW.status >= 400, coalesce(NEW.prompt_tokens, 0), coalesce(NEW.completion_tokens, 0), coalesce(NEW.cached_tokens, 0),
      coalesce(NEW.cost_nanos, 0), NEW.ttft_ms IS NOT NULL, NEW.unpriced, CASE WHEN NEW.unpriced = 1 THEN NEW.created_at END)
    ON CONFLICT DO UPDATE SET requests = requests + 1, errors = errors + excluded.errors,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
      cached_tokens = cached_tokens + excluded.cached_tokens, cost_nanos = cost_nanos + excluded.cost_nanos,
      ttft_count = ttft_count + excluded.ttft_count, unpriced_requests = unpriced_requests + excluded.unpriced_requests,
      last_unpriced_at = nullif(max(coalesce(last_unpriced_at, ''), coalesce(excluded.last_unpriced_at, '')), '');
END;

CREATE TRIGGER gateway_users_rollup_detach AFTER DELETE ON gateway_users BEGIN
  INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
      prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
    SELECT bucket_start, 0, provider, model_requested, model_served, requests, errors, prompt_tokens, completion_tokens,
      cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at
    FROM usage_rollups WHERE gateway_user_id = OLD.id
    ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, errors = errors + excluded.errors,
      prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
      cached_tokens = cached_tokens + excluded.cached_tokens, cost_nanos = cost_nanos + excluded.cost_nanos,
      ttft_count = ttft_count + excluded.ttft_count, unpriced_requests = unpriced_requests + excluded.unpriced_requests,
      last_unpriced_at = nullif(max(coalesce(last_unpriced_at, ''), coalesce(excluded.last_unpriced_at, '')), '');
  DELETE FROM usage_rollups WHERE gateway_user_id = OLD.id;
END;

-- Backfill from the existing log: one GROUP BY over llm_requests (a few seconds at a million rows, once,
-- while the gateway starts).
INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
    prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
  SELECT substr(created_at, 1, 14) || printf('%02d', (CAST(substr(created_at, 15, 2) AS INTEGER) / 15) * 15) || ':00.000Z',
    coalesce(gateway_user_id, 0), coalesce(provider, ''), coalesce(model_requested, ''), coalesce(model_served, ''),
    count(*), sum(status >= 400), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
    coalesce(sum(cached_tokens), 0), coalesce(sum(cost_nanos), 0), count(ttft_ms), sum(unpriced),
    max(CASE WHEN unpriced = 1 THEN created_at END)
  FROM llm_requests GROUP BY 1, 2, 3, 4, 5;

-- version: 10
-- The ids of each stored response's output items (plugin response-store), so an `item_reference` in a
-- later request (the Vercel AI SDK sends one for every item of an earlier stored response) resolves on
-- any provider. Removed with their response.
CREATE TABLE response_items (
  gateway_user_id INTEGER NOT NULL,
  item_id TEXT NOT NULL,
  response_id TEXT NOT NULL,
  PRIMARY KEY (gateway_user_id, item_id),
  FOREIGN KEY (gateway_user_id, response_id) REFERENCES responses (gateway_user_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX response_items_by_response ON response_items (gateway_user_id, response_id);

-- version: 11
-- The writer adds each batch's sums to usage_rollups itself, one upsert per key and batch
-- (core/request-log/usage-rollup-writer.ts): the per-row trigger cost ~32 µs per logged request, most of the log
-- write. Rows written to llm_requests by other means need `rebuildUsageRollups`.
DROP TRIGGER llm_requests_rollup;

-- version: 12
-- Costs anyone can verify and fix (`tollgate pricing reprice`): the usage report the upstream sent, as
-- the gateway read it (OpenAI-shaped `usage` JSON; NULL when none came and the usage was estimated),
-- and the price the row was billed at (JSON: the `model_pricing` row's prices, USD per million tokens,
-- with its model and source; NULL when unpriced).
ALTER TABLE llm_requests ADD COLUMN usage_reported TEXT;
ALTER TABLE llm_requests ADD COLUMN billed_price TEXT;

-- version: 13
-- Budget alerts (budget plugin `alerts`, docs/budgets-and-pricing.md "Budget alerts").
-- A user's own alert thresholds, a JSON array of integer percents of the budget limit ([50, 90]);
-- NULL = the manifest's `alerts.thresholds`; [] = no alerts for this user.
ALTER TABLE gateway_users ADD COLUMN budget_alert_thresholds TEXT;
-- One row per threshold crossed per user and budget period: inserted with INSERT OR IGNORE in the same
-- transaction as the spend that crossed it, so the UNIQUE key makes "once per period" hold across
-- concurrency, crashes and restarts. The row is also the webhook's durable delivery queue: `payload`
-- is the exact JSON body; `state` 'pending' rows are (re)sent once `next_attempt_at` has passed, so a
-- restart resumes them. 'unsent' = no webhook was configured when it fired.
CREATE TABLE budget_alerts (
  id INTEGER PRIMARY KEY,
  gateway_user_id INTEGER NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  -- Start of the budget period (ISO-8601 UTC) the spend belongs to.
  period_start TEXT NOT NULL,
  threshold_percent INTEGER NOT NULL CHECK (threshold_percent > 0),
  fired_at TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'unsent')),
  attempts INTEGER NOT NULL DEFAULT 0,
  -- When a 'pending' row is due; NULL in every other state.
  next_attempt_at TEXT,
  delivered_at TEXT,
  last_error TEXT,
  UNIQUE (gateway_user_id, period_start, threshold_percent)
) STRICT;
CREATE INDEX budget_alerts_due ON budget_alerts (next_attempt_at) WHERE state = 'pending';
CREATE INDEX budget_alerts_by_time ON budget_alerts (fired_at);

-- version: 14
-- The upstream's order of each provider's model list, so every engine reloads it in that order
-- (SQLite kept it by rowid; PostgreSQL has no insertion order). Rows from before keep 0 and, on
-- SQLite, their rowid order.
ALTER TABLE model_catalog ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
-- postgres:
ALTER TABLE model_catalog ADD COLUMN position bigint NOT NULL DEFAULT 0;

-- version: 15
-- Bounds on the Responses store (plugin response-store). `size_bytes`: what a stored response takes
-- (its input items, its response object and the copies of its output items below, in UTF-8 bytes),
-- for the per-user quota and for bounding what a continuation reads. `response_items.item`: the
-- output item itself (JSON), so an `item_reference` reads that item and never parses its whole
-- response (whose metadata may be megabytes). `response_totals`: each user's stored responses and
-- their bytes, kept by triggers on every insert and delete (a sweep, a user's deletion), so a quota
-- check and the /metrics gauges read one row per user instead of summing the table.
ALTER TABLE responses ADD COLUMN size_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE response_items ADD COLUMN item TEXT;
UPDATE response_items SET item = (
  SELECT o.value FROM responses r, json_each(r.response, '$.output') o
  WHERE r.gateway_user_id = response_items.gateway_user_id AND r.id = response_items.response_id
    AND json_extract(o.value, '$.id') = response_items.item_id
  ORDER BY o.key LIMIT 1
);
-- An id whose item cannot be found again cannot be resolved.
DELETE FROM response_items WHERE item IS NULL;
UPDATE responses SET size_bytes = length(CAST(input_items AS BLOB)) + length(CAST(response AS BLOB))
  + coalesce((SELECT sum(length(CAST(i.item AS BLOB))) FROM response_items i WHERE i.gateway_user_id = responses.gateway_user_id AND i.response_id = responses.id), 0);
-- A user's oldest responses first, for `overQuota: "expire-oldest"`.
CREATE INDEX responses_by_user_age ON responses (gateway_user_id, created_at);
CREATE TABLE response_totals (
  gateway_user_id INTEGER NOT NULL PRIMARY KEY REFERENCES gateway_users (id) ON DELETE CASCADE,
  response_count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
) STRICT;
INSERT INTO response_totals (gateway_user_id, response_count, bytes)
  SELECT gateway_user_id, count(*), sum(size_bytes) FROM responses GROUP BY gateway_user_id;
CREATE TRIGGER responses_totals_insert AFTER INSERT ON responses BEGIN
  INSERT INTO response_totals (gateway_user_id, response_count, bytes) VALUES (NEW.gateway_user_id, 1, NEW.size_bytes)
    ON CONFLICT (gateway_user_id) DO UPDATE SET response_count = response_count + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER responses_totals_delete AFTER DELETE ON responses BEGIN
  UPDATE response_totals SET response_count = response_count - 1, bytes = bytes - OLD.size_bytes WHERE gateway_user_id = OLD.gateway_user_id;
END;
-- postgres:
ALTER TABLE responses ADD COLUMN size_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE response_items ADD COLUMN item text COLLATE "C";
-- PostgreSQL's JSON functions refuse the \u0000 escape a stored text may hold (JSON.stringify writes
-- it for a NUL): it is read as U+FFFD, as the store writes a NUL in a string parameter.
UPDATE response_items i SET item = (
  SELECT o.value::text
  FROM responses r, LATERAL (SELECT replace(r.response, '\u0000', '\ufffd')::json -> 'output' AS output) parsed,
    json_array_elements(CASE WHEN json_typeof(parsed.output) = 'array' THEN parsed.output ELSE '[]'::json END) WITH ORDINALITY o(value, n)
  WHERE r.gateway_user_id = i.gateway_user_id AND r.id = i.response_id AND o.value ->> 'id' = i.item_id
  ORDER BY o.n LIMIT 1
);
DELETE FROM response_items WHERE item IS NULL;
UPDATE responses r SET size_bytes = octet_length(r.input_items) + octet_length(r.response)
  + coalesce((SELECT sum(octet_length(i.item)) FROM response_items i WHERE i.gateway_user_id = r.gateway_user_id AND i.response_id = r.id), 0);
CREATE INDEX responses_by_user_age ON responses (gateway_user_id, created_at);
CREATE TABLE response_totals (
  gateway_user_id bigint PRIMARY KEY REFERENCES gateway_users (id) ON DELETE CASCADE,
  response_count bigint NOT NULL,
  bytes bigint NOT NULL
);
INSERT INTO response_totals (gateway_user_id, response_count, bytes)
  SELECT gateway_user_id, count(*), sum(size_bytes) FROM responses GROUP BY gateway_user_id;
CREATE FUNCTION response_totals_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO response_totals (gateway_user_id, response_count, bytes) VALUES (NEW.gateway_user_id, 1, NEW.size_bytes)
    ON CONFLICT (gateway_user_id) DO UPDATE SET response_count = response_totals.response_count + 1, bytes = response_totals.bytes + excluded.bytes;
  RETURN NULL;
END
$$;
CREATE FUNCTION response_totals_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE response_totals SET response_count = response_count - 1, bytes = bytes - OLD.size_bytes WHERE gateway_user_id = OLD.gateway_user_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER responses_totals_insert AFTER INSERT ON responses FOR EACH ROW EXECUTE FUNCTION response_totals_add();
CREATE TRIGGER responses_totals_delete AFTER DELETE ON responses FOR EACH ROW EXECUTE FUNCTION response_totals_remove();

-- version: 16
-- usage_rollups.errors counts what the gateway or an upstream failed (core/request-log/usage-rollup-writer.ts
-- `countsAsError`): a status >= 500, or a 401, 402, 403 or 429 from an upstream (the row has attempts).
-- Until now it counted every status >= 400, refusals of the client's own request included (a budget's
-- 402, an unknown model's 404); the quarters that have any are recounted from the log (the hour of the
-- quarter is an index range of llm_requests: ';' sorts after the ':' of any minute).
UPDATE usage_rollups SET errors = (
  SELECT count(*) FROM llm_requests r
  WHERE r.created_at >= usage_rollups.bucket_start AND r.created_at < substr(usage_rollups.bucket_start, 1, 13) || ';'
    AND substr(r.created_at, 1, 14) || CASE WHEN substr(r.created_at, 15, 2) < '15' THEN '00' WHEN substr(r.created_at, 15, 2) < '30' THEN '15'
      WHEN substr(r.created_at, 15, 2) < '45' THEN '30' ELSE '45' END || ':00.000Z' = usage_rollups.bucket_start
    AND coalesce(r.gateway_user_id, 0) = usage_rollups.gateway_user_id AND coalesce(r.provider, '') = usage_rollups.provider
    AND coalesce(r.model_requested, '') = usage_rollups.model_requested AND coalesce(r.model_served, '') = usage_rollups.model_served
    AND (r.status >= 500 OR (r.attempts IS NOT NULL AND r.status IN (401, 402, 403, 429))))
WHERE errors > 0;
-- postgres:
UPDATE usage_rollups SET errors = (
  SELECT count(*) FROM llm_requests r
  WHERE r.created_at >= usage_rollups.bucket_start AND r.created_at < substr(usage_rollups.bucket_start, 1, 13) || ';'
    AND substr(r.created_at, 1, 14) || CASE WHEN substr(r.created_at, 15, 2) < '15' THEN '00' WHEN substr(r.created_at, 15, 2) < '30' THEN '15'
      WHEN substr(r.created_at, 15, 2) < '45' THEN '30' ELSE '45' END || ':00.000Z' = usage_rollups.bucket_start
    AND coalesce(r.gateway_user_id, 0) = usage_rollups.gateway_user_id AND coalesce(r.provider, '') = usage_rollups.provider
    AND coalesce(r.model_requested, '') = usage_rollups.model_requested AND coalesce(r.model_served, '') = usage_rollups.model_served
    AND (r.status >= 500 OR (r.attempts IS NOT NULL AND r.status IN (401, 402, 403, 429))))
WHERE errors > 0;

-- version: 17
-- Plugins written on the plugin SDK (docs/plugins.md): the plugin whose failure ended a request
-- (error_code plugin_error), and the fields plugins added to a row (a JSON object of string, number,
-- boolean or null values; NULL when none).
ALTER TABLE llm_requests ADD COLUMN error_plugin TEXT;
ALTER TABLE llm_requests ADD COLUMN plugin_fields TEXT;
-- postgres:
ALTER TABLE llm_requests ADD COLUMN error_plugin text COLLATE "C";
ALTER TABLE llm_requests ADD COLUMN plugin_fields text COLLATE "C";

-- version: 18
-- The key-value store of plugins written on the SDK (`ctx.kv()`, core/store/plugin-kv.ts): each
-- plugin's own keys, a value's UTF-8 bytes with its key's (`size_bytes`), when it expires (ms since
-- the epoch, NULL = never) and when it was written (ms since the epoch: eviction drops a plugin's
-- oldest-written entries first, `plugin_kv_by_age`). `plugin_kv_totals`: each plugin's bytes, kept by
-- triggers on every insert, update and delete (a set, an eviction, the expiry sweep), so a set checks
-- its plugin's bound by reading one row instead of summing the table.
CREATE TABLE plugin_kv (
  plugin TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  expires_at INTEGER,
  written_at INTEGER NOT NULL,
  PRIMARY KEY (plugin, key)
) STRICT;
CREATE INDEX plugin_kv_by_age ON plugin_kv (plugin, written_at, key);
CREATE INDEX plugin_kv_by_expiry ON plugin_kv (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE plugin_kv_totals (
  plugin TEXT NOT NULL PRIMARY KEY,
  bytes INTEGER NOT NULL
) STRICT;
CREATE TRIGGER plugin_kv_totals_insert AFTER INSERT ON plugin_kv BEGIN
  INSERT INTO plugin_kv_totals (plugin, bytes) VALUES (NEW.plugin, NEW.size_bytes)
    ON CONFLICT (plugin) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER plugin_kv_totals_update AFTER UPDATE OF size_bytes ON plugin_kv BEGIN
  UPDATE plugin_kv_totals SET bytes = bytes - OLD.size_bytes + NEW.size_bytes WHERE plugin = NEW.plugin;
END;
CREATE TRIGGER plugin_kv_totals_delete AFTER DELETE ON plugin_kv BEGIN
  UPDATE plugin_kv_totals SET bytes = bytes - OLD.size_bytes WHERE plugin = OLD.plugin;
END;
-- postgres:
-- `value` is bytea (the UTF-8 bytes): PostgreSQL's text cannot hold a NUL character, a plugin's value may.
CREATE TABLE plugin_kv (
  plugin text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  value bytea NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  expires_at bigint,
  written_at bigint NOT NULL,
  PRIMARY KEY (plugin, key)
);
CREATE INDEX plugin_kv_by_age ON plugin_kv (plugin, written_at, key);
CREATE INDEX plugin_kv_by_expiry ON plugin_kv (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE plugin_kv_totals (
  plugin text COLLATE "C" PRIMARY KEY,
  bytes bigint NOT NULL
);
CREATE FUNCTION plugin_kv_totals_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO plugin_kv_totals (plugin, bytes) VALUES (NEW.plugin, NEW.size_bytes)
      ON CONFLICT (plugin) DO UPDATE SET bytes = plugin_kv_totals.bytes + excluded.bytes;
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE plugin_kv_totals SET bytes = bytes - OLD.size_bytes + NEW.size_bytes WHERE plugin = NEW.plugin;
  ELSE
    UPDATE plugin_kv_totals SET bytes = bytes - OLD.size_bytes WHERE plugin = OLD.plugin;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER plugin_kv_totals_insert AFTER INSERT ON plugin_kv FOR EACH ROW EXECUTE FUNCTION plugin_kv_totals_change();
CREATE TRIGGER plugin_kv_totals_update AFTER UPDATE OF size_bytes ON plugin_kv FOR EACH ROW EXECUTE FUNCTION plugin_kv_totals_change();
CREATE TRIGGER plugin_kv_totals_delete AFTER DELETE ON plugin_kv FOR EACH ROW EXECUTE FUNCTION plugin_kv_totals_change();

-- version: 19
-- Reconciliation of the ledger with the providers' own usage and cost reports (core/reconcile/,
-- `tollgate reconcile`, docs/reconciliation.md). `usage_report_credentials`: one admin ("usage report")
-- credential per provider id, sealed like provider_credentials (AES-256-GCM under the master key, AAD
-- "usage_report_credentials:<provider>"); `kind` names the report API that speaks for it (openai,
-- anthropic); `gateway_key_ids` the provider-side ids of the keys Tollgate itself uses (JSON array;
-- NULL = not told), so usage on any other key is named as used outside Tollgate.
CREATE TABLE usage_report_credentials (
  provider TEXT NOT NULL PRIMARY KEY,
  kind TEXT NOT NULL,
  ciphertext BLOB NOT NULL,
  nonce BLOB NOT NULL,
  auth_tag BLOB NOT NULL,
  key_id TEXT NOT NULL,
  hint TEXT NOT NULL,
  base_url TEXT,
  gateway_key_ids TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
-- One row per reconciliation run: the UTC days it covered (inclusive, YYYY-MM-DD), what started it,
-- its outcome ('ok', 'flagged': some difference beyond the tolerance, 'failed': a report could not be
-- read, `error` says why), the cost totals on both sides (integer nano-USD), and the alert's delivery
-- ('delivered', 'failed', 'unsent' = no webhook configured; NULL = nothing to send).
CREATE TABLE reconciliation_runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  from_day TEXT NOT NULL,
  to_day TEXT NOT NULL,
  providers TEXT NOT NULL,
  trigger TEXT NOT NULL CHECK (trigger IN ('cli', 'schedule', 'api')),
  state TEXT NOT NULL CHECK (state IN ('ok', 'flagged', 'failed')),
  flagged_rows INTEGER NOT NULL,
  ledger_cost_nanos INTEGER NOT NULL,
  report_cost_nanos INTEGER NOT NULL,
  error TEXT,
  alert_state TEXT CHECK (alert_state IN ('delivered', 'failed', 'unsent'))
) STRICT;
CREATE INDEX reconciliation_runs_by_time ON reconciliation_runs (started_at);
-- One row per UTC day x provider x model of a run, both sides' figures (tokens as canonical kinds:
-- input INCLUDES cached and cache-write tokens; money in integer nano-USD). A side that has nothing for
-- the row has *_present = 0; a figure the report does not give (Anthropic has no request counts) is NULL.
-- `causes`: JSON array of {code, message}, the likely causes of a flagged row.
CREATE TABLE reconciliation_differences (
  run_id INTEGER NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  day TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  ledger_present INTEGER NOT NULL CHECK (ledger_present IN (0, 1)),
  ledger_requests INTEGER NOT NULL,
  ledger_failed_requests INTEGER NOT NULL,
  ledger_input_tokens INTEGER NOT NULL,
  ledger_cached_input_tokens INTEGER NOT NULL,
  ledger_cache_write_tokens INTEGER NOT NULL,
  ledger_output_tokens INTEGER NOT NULL,
  ledger_cost_nanos INTEGER NOT NULL,
  report_present INTEGER NOT NULL CHECK (report_present IN (0, 1)),
  report_requests INTEGER,
  report_input_tokens INTEGER NOT NULL,
  report_cached_input_tokens INTEGER NOT NULL,
  report_cache_write_tokens INTEGER NOT NULL,
  report_output_tokens INTEGER NOT NULL,
  report_cost_nanos INTEGER,
  flagged INTEGER NOT NULL CHECK (flagged IN (0, 1)),
  causes TEXT NOT NULL,
  PRIMARY KEY (run_id, day, provider, model)
) STRICT;
-- postgres:
CREATE TABLE usage_report_credentials (
  provider text COLLATE "C" PRIMARY KEY,
  kind text COLLATE "C" NOT NULL,
  ciphertext bytea NOT NULL,
  nonce bytea NOT NULL,
  auth_tag bytea NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  hint text COLLATE "C" NOT NULL,
  base_url text COLLATE "C",
  gateway_key_ids text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL
);
CREATE TABLE reconciliation_runs (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  started_at text COLLATE "C" NOT NULL,
  finished_at text COLLATE "C" NOT NULL,
  from_day text COLLATE "C" NOT NULL,
  to_day text COLLATE "C" NOT NULL,
  providers text COLLATE "C" NOT NULL,
  trigger text COLLATE "C" NOT NULL CHECK (trigger IN ('cli', 'schedule', 'api')),
  state text COLLATE "C" NOT NULL CHECK (state IN ('ok', 'flagged', 'failed')),
  flagged_rows bigint NOT NULL,
  ledger_cost_nanos bigint NOT NULL,
  report_cost_nanos bigint NOT NULL,
  error text COLLATE "C",
  alert_state text COLLATE "C" CHECK (alert_state IN ('delivered', 'failed', 'unsent'))
);
CREATE INDEX reconciliation_runs_by_time ON reconciliation_runs (started_at);
CREATE TABLE reconciliation_differences (
  run_id bigint NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  day text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  ledger_present smallint NOT NULL CHECK (ledger_present IN (0, 1)),
  ledger_requests bigint NOT NULL,
  ledger_failed_requests bigint NOT NULL,
  ledger_input_tokens bigint NOT NULL,
  ledger_cached_input_tokens bigint NOT NULL,
  ledger_cache_write_tokens bigint NOT NULL,
  ledger_output_tokens bigint NOT NULL,
  ledger_cost_nanos bigint NOT NULL,
  report_present smallint NOT NULL CHECK (report_present IN (0, 1)),
  report_requests bigint,
  report_input_tokens bigint NOT NULL,
  report_cached_input_tokens bigint NOT NULL,
  report_cache_write_tokens bigint NOT NULL,
  report_output_tokens bigint NOT NULL,
  report_cost_nanos bigint,
  flagged smallint NOT NULL CHECK (flagged IN (0, 1)),
  causes text COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, day, provider, model)
);

-- version: 20
-- Admin roles (docs/admin-api.md "Roles"): each session carries the role its admin signed in with
-- ('admin': everything; 'viewer': reads only; 'team-admin': the members, keys and budgets of the teams
-- named in `teams`, a JSON array of team names). A password sign-in is always 'admin'; single sign-on
-- maps the role from a claim at each sign-in, so it is kept per session, not per admin.
ALTER TABLE admin_sessions ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer', 'team-admin'));
ALTER TABLE admin_sessions ADD COLUMN teams TEXT NOT NULL DEFAULT '[]';
-- postgres:
ALTER TABLE admin_sessions ADD COLUMN role text COLLATE "C" NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer', 'team-admin'));
ALTER TABLE admin_sessions ADD COLUMN teams text COLLATE "C" NOT NULL DEFAULT '[]';

-- version: 21
-- Free-form tags on API keys (core/accounts/key-tags.ts): canonical JSON, names sorted
-- ({"cost-center":"42","project":"search"}); NULL = none. Each request's row copies its key's tags,
-- so a row keeps the tags it was made under when the key's change later.
ALTER TABLE api_keys ADD COLUMN tags TEXT;
ALTER TABLE llm_requests ADD COLUMN tags TEXT;
-- postgres:
ALTER TABLE api_keys ADD COLUMN tags text COLLATE "C";
ALTER TABLE llm_requests ADD COLUMN tags text COLLATE "C";

-- version: 22
-- Self-service portal sessions (docs/portal.md) for gateway users, not admins: the cookie
-- `tollgate_portal` carries a random 256-bit token, this table only its SHA-256, as admin_sessions.
-- A session ends with its user (ON DELETE CASCADE).
CREATE TABLE portal_sessions (
  token_hash TEXT PRIMARY KEY,
  gateway_user_id INTEGER NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ip TEXT,
  user_agent TEXT
) STRICT;
CREATE INDEX portal_sessions_by_user ON portal_sessions (gateway_user_id);
-- postgres:
CREATE TABLE portal_sessions (
  token_hash text COLLATE "C" PRIMARY KEY,
  gateway_user_id bigint NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  created_at text COLLATE "C" NOT NULL,
  last_seen_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  ip text COLLATE "C",
  user_agent text COLLATE "C"
);
CREATE INDEX portal_sessions_by_user ON portal_sessions (gateway_user_id);

-- version: 23
-- Teams (docs/admin-api.md "Teams", docs/budgets-and-pricing.md "Team budgets"): a group of gateway
-- users with its own calendar budget (the same columns, periods and alert thresholds as a user's:
-- limit in micro-USD, spend in integer nano-USD of the period starting at budget_period_start), its
-- rpm / tpm / max_concurrent limits (NULL = no team limit) and a model allow-list (`models`: a JSON
-- array of glob patterns as api_keys.models; NULL = every model). A user belongs to at most one team
-- (`gateway_users.team_id`); deleting a team leaves its members without one (ON DELETE SET NULL).
-- `llm_requests.team_id`: the requester's team when the request was made (kept when the team goes).
CREATE TABLE teams (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  budget_limit_micros INTEGER CHECK (budget_limit_micros IS NULL OR budget_limit_micros >= 0),
  budget_period TEXT NOT NULL DEFAULT 'monthly' CHECK (budget_period IN ('daily', 'weekly', 'monthly', 'never')),
  budget_spent_nanos INTEGER NOT NULL DEFAULT 0 CHECK (budget_spent_nanos >= 0),
  budget_period_start TEXT,
  budget_alert_thresholds TEXT,
  rpm INTEGER CHECK (rpm IS NULL OR rpm > 0),
  tpm INTEGER CHECK (tpm IS NULL OR tpm > 0),
  max_concurrent INTEGER CHECK (max_concurrent IS NULL OR max_concurrent > 0),
  models TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
ALTER TABLE gateway_users ADD COLUMN team_id INTEGER REFERENCES teams (id) ON DELETE SET NULL;
CREATE INDEX gateway_users_by_team ON gateway_users (team_id);
ALTER TABLE llm_requests ADD COLUMN team_id INTEGER;
CREATE INDEX llm_requests_by_team_time ON llm_requests (team_id, created_at);
-- postgres:
CREATE TABLE teams (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE,
  budget_limit_micros bigint CHECK (budget_limit_micros IS NULL OR budget_limit_micros >= 0),
  budget_period text COLLATE "C" NOT NULL DEFAULT 'monthly' CHECK (budget_period IN ('daily', 'weekly', 'monthly', 'never')),
  budget_spent_nanos bigint NOT NULL DEFAULT 0 CHECK (budget_spent_nanos >= 0),
  budget_period_start text COLLATE "C",
  budget_alert_thresholds text COLLATE "C",
  rpm bigint CHECK (rpm IS NULL OR rpm > 0),
  tpm bigint CHECK (tpm IS NULL OR tpm > 0),
  max_concurrent bigint CHECK (max_concurrent IS NULL OR max_concurrent > 0),
  models text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL
);
ALTER TABLE gateway_users ADD COLUMN team_id bigint REFERENCES teams (id) ON DELETE SET NULL;
CREATE INDEX gateway_users_by_team ON gateway_users (team_id);
ALTER TABLE llm_requests ADD COLUMN team_id bigint;
CREATE INDEX llm_requests_by_team_time ON llm_requests (team_id, created_at, id);

-- version: 24
-- The audit log (core/audit/, docs/audit.md): one row per state-changing admin, CLI or portal action,
-- append-only, each row chained to the previous by `hash` = hex SHA-256 of `prev_hash` and the row's
-- fields (`core/audit/audit-hash.ts`), so an edited, inserted or deleted row is found by `tollgate audit
-- verify`. Ids are given by the appender (head + 1), so a gap is a deleted row; `prev_hash` is UNIQUE,
-- so two writers can never fork the chain. `before`/`after`: JSON text, secrets already redacted.
-- `audit_chain_head`: the one row naming the last id and hash (genesis: id 0, 64 zeros): appends lock
-- it (PostgreSQL: SELECT ... FOR UPDATE) and verify compares it with the last row, so deleting the
-- newest rows is found too.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('admin', 'cli', 'portal', 'system')),
  role TEXT,
  ip TEXT,
  action TEXT NOT NULL,
  object_type TEXT,
  object_id TEXT,
  before TEXT,
  after TEXT,
  request_id TEXT,
  prev_hash TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL
) STRICT;
CREATE INDEX audit_log_by_time ON audit_log (at, id);
CREATE INDEX audit_log_by_actor ON audit_log (actor, id);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
CREATE TABLE audit_chain_head (
  singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
  last_id INTEGER NOT NULL,
  last_hash TEXT NOT NULL
) STRICT;
INSERT INTO audit_chain_head (singleton, last_id, last_hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
-- postgres:
CREATE TABLE audit_log (
  id bigint PRIMARY KEY,
  at text COLLATE "C" NOT NULL,
  actor text COLLATE "C" NOT NULL,
  actor_kind text COLLATE "C" NOT NULL CHECK (actor_kind IN ('admin', 'cli', 'portal', 'system')),
  role text COLLATE "C",
  ip text COLLATE "C",
  action text COLLATE "C" NOT NULL,
  object_type text COLLATE "C",
  object_id text COLLATE "C",
  before text COLLATE "C",
  after text COLLATE "C",
  request_id text COLLATE "C",
  prev_hash text COLLATE "C" NOT NULL UNIQUE,
  hash text COLLATE "C" NOT NULL
);
CREATE INDEX audit_log_by_time ON audit_log (at, id);
CREATE INDEX audit_log_by_actor ON audit_log (actor, id);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
CREATE TABLE audit_chain_head (
  singleton smallint PRIMARY KEY CHECK (singleton = 1),
  last_id bigint NOT NULL,
  last_hash text COLLATE "C" NOT NULL
);
INSERT INTO audit_chain_head (singleton, last_id, last_hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END
$$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- version: 25
-- Reconciliation per provider key and its durable webhook (docs/reconciliation.md).
-- `llm_requests.upstream_key`: the non-secret fingerprint of the upstream credential that served the
-- request (a pooled key's, the provider's shared key's or the user's own: "…" + its last four
-- characters, or "#" + 8 hex of its SHA-256 when it is short); NULL when no upstream was reached.
-- `usage_report_credentials.key_map`: JSON object of the provider's own key ids (OpenAI and
-- Anthropic `api_key_id`) to those fingerprints, told by the operator (`--key-map`).
-- `reconciliation_key_differences`: a run's rows per day × provider × model × provider key id, where
-- the report names the key; `upstream_key` NULL = a key that is not Tollgate's. The report bills no
-- key, so its cost is the price table's price of its tokens.
-- `reconciliation_alerts`: the durable queue of flagged runs' webhooks (as budget_alerts).
ALTER TABLE llm_requests ADD COLUMN upstream_key TEXT;
ALTER TABLE usage_report_credentials ADD COLUMN key_map TEXT;
CREATE TABLE reconciliation_key_differences (
  run_id INTEGER NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  day TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  api_key_id TEXT NOT NULL,
  upstream_key TEXT,
  tollgate_key INTEGER NOT NULL CHECK (tollgate_key IN (0, 1)),
  ledger_requests INTEGER NOT NULL,
  ledger_input_tokens INTEGER NOT NULL,
  ledger_output_tokens INTEGER NOT NULL,
  ledger_cost_nanos INTEGER NOT NULL,
  report_requests INTEGER,
  report_input_tokens INTEGER NOT NULL,
  report_output_tokens INTEGER NOT NULL,
  report_cost_nanos INTEGER,
  flagged INTEGER NOT NULL CHECK (flagged IN (0, 1)),
  causes TEXT NOT NULL,
  PRIMARY KEY (run_id, day, provider, model, api_key_id)
) STRICT;
CREATE TABLE reconciliation_alerts (
  run_id INTEGER NOT NULL PRIMARY KEY REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  -- When a 'pending' row is due; NULL in every other state.
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  delivered_at TEXT,
  last_error TEXT
) STRICT;
CREATE INDEX reconciliation_alerts_due ON reconciliation_alerts (next_attempt_at) WHERE state = 'pending';
-- postgres:
ALTER TABLE llm_requests ADD COLUMN upstream_key text COLLATE "C";
ALTER TABLE usage_report_credentials ADD COLUMN key_map text COLLATE "C";
CREATE TABLE reconciliation_key_differences (
  run_id bigint NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  day text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  api_key_id text COLLATE "C" NOT NULL,
  upstream_key text COLLATE "C",
  tollgate_key smallint NOT NULL CHECK (tollgate_key IN (0, 1)),
  ledger_requests bigint NOT NULL,
  ledger_input_tokens bigint NOT NULL,
  ledger_output_tokens bigint NOT NULL,
  ledger_cost_nanos bigint NOT NULL,
  report_requests bigint,
  report_input_tokens bigint NOT NULL,
  report_output_tokens bigint NOT NULL,
  report_cost_nanos bigint,
  flagged smallint NOT NULL CHECK (flagged IN (0, 1)),
  causes text COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, day, provider, model, api_key_id)
);
CREATE TABLE reconciliation_alerts (
  run_id bigint PRIMARY KEY REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
  payload text COLLATE "C" NOT NULL,
  state text COLLATE "C" NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  delivered_at text COLLATE "C",
  last_error text COLLATE "C"
);
CREATE INDEX reconciliation_alerts_due ON reconciliation_alerts (next_attempt_at) WHERE state = 'pending';

-- postgres baseline: 13
CREATE TABLE gateway_users (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE,
  email text COLLATE "C",
  disabled smallint NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  budget_limit_micros bigint CHECK (budget_limit_micros IS NULL OR budget_limit_micros >= 0),
  budget_period text COLLATE "C" NOT NULL DEFAULT 'monthly' CHECK (budget_period IN ('daily', 'weekly', 'monthly', 'never')),
  rpm bigint CHECK (rpm IS NULL OR rpm > 0),
  tpm bigint CHECK (tpm IS NULL OR tpm > 0),
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  budget_spent_nanos bigint NOT NULL DEFAULT 0 CHECK (budget_spent_nanos >= 0),
  budget_period_start text COLLATE "C",
  max_concurrent bigint CHECK (max_concurrent > 0),
  budget_alert_thresholds text COLLATE "C"
);

CREATE TABLE api_keys (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  gateway_user_id bigint NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  name text COLLATE "C",
  key_hash text COLLATE "C" NOT NULL UNIQUE,
  key_prefix text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C",
  revoked_at text COLLATE "C",
  last_used_at text COLLATE "C",
  rpm bigint CHECK (rpm IS NULL OR rpm > 0),
  tpm bigint CHECK (tpm IS NULL OR tpm > 0),
  models text COLLATE "C"
);
CREATE INDEX api_keys_by_user ON api_keys (gateway_user_id);

CREATE TABLE admin_users (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  username text COLLATE "C" NOT NULL UNIQUE,
  password_hash text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL
);

CREATE TABLE llm_requests (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  request_id text COLLATE "C" NOT NULL UNIQUE,
  gateway_user_id bigint REFERENCES gateway_users (id) ON DELETE SET NULL,
  api_key_id bigint REFERENCES api_keys (id) ON DELETE SET NULL,
  provider text COLLATE "C",
  model_requested text COLLATE "C",
  model_served text COLLATE "C",
  status bigint NOT NULL,
  error_code text COLLATE "C",
  prompt_tokens bigint,
  completion_tokens bigint,
  cached_tokens bigint,
  latency_ms bigint NOT NULL,
  ttft_ms bigint,
  stream smallint NOT NULL CHECK (stream IN (0, 1)),
  created_at text COLLATE "C" NOT NULL,
  cache_write_tokens bigint,
  cost_nanos bigint,
  usage_estimated smallint NOT NULL DEFAULT 0 CHECK (usage_estimated IN (0, 1)),
  unpriced smallint NOT NULL DEFAULT 0 CHECK (unpriced IN (0, 1)),
  endpoint text COLLATE "C",
  attempts text COLLATE "C",
  usage_reported text COLLATE "C",
  billed_price text COLLATE "C"
);
CREATE INDEX llm_requests_by_time ON llm_requests (created_at, id);
CREATE INDEX llm_requests_by_user_time ON llm_requests (gateway_user_id, created_at, id);
CREATE INDEX llm_requests_unpriced ON llm_requests (model_served) WHERE unpriced = 1;
CREATE INDEX llm_requests_by_key_time ON llm_requests (api_key_id, created_at, id);
CREATE INDEX llm_requests_by_provider_time ON llm_requests (provider, created_at, id);
CREATE INDEX llm_requests_by_model_requested_time ON llm_requests (model_requested, created_at, id);
CREATE INDEX llm_requests_by_model_served_time ON llm_requests (model_served, created_at, id);

CREATE TABLE model_pricing (
  model text COLLATE "C" NOT NULL UNIQUE,
  provider text COLLATE "C",
  input_price_per_million double precision NOT NULL CHECK (input_price_per_million >= 0),
  output_price_per_million double precision NOT NULL CHECK (output_price_per_million >= 0),
  cached_input_price_per_million double precision CHECK (cached_input_price_per_million >= 0),
  source text COLLATE "C" NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'import')),
  updated_at text COLLATE "C" NOT NULL,
  cache_write_price_per_million double precision CHECK (cache_write_price_per_million >= 0)
);

CREATE TABLE provider_credentials (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  gateway_user_id bigint REFERENCES gateway_users (id) ON DELETE CASCADE,
  provider text COLLATE "C" NOT NULL,
  ciphertext bytea NOT NULL,
  nonce bytea NOT NULL,
  auth_tag bytea NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  hint text COLLATE "C" NOT NULL,
  base_url text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  -- NULLS NOT DISTINCT (PostgreSQL 15+): at most one shared (NULL user) credential per provider.
  UNIQUE NULLS NOT DISTINCT (gateway_user_id, provider)
);

CREATE TABLE model_catalog (
  provider text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  display_name text COLLATE "C",
  created bigint NOT NULL DEFAULT 0,
  owned_by text COLLATE "C" NOT NULL,
  fetched_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (provider, model)
);

CREATE TABLE admin_sessions (
  token_hash text COLLATE "C" PRIMARY KEY,
  admin_user_id bigint NOT NULL REFERENCES admin_users (id) ON DELETE CASCADE,
  created_at text COLLATE "C" NOT NULL,
  last_seen_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  ip text COLLATE "C",
  user_agent text COLLATE "C"
);
CREATE INDEX admin_sessions_by_admin ON admin_sessions (admin_user_id);

CREATE TABLE responses (
  gateway_user_id bigint NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  id text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  served_natively smallint NOT NULL CHECK (served_natively IN (0, 1)),
  previous_response_id text COLLATE "C",
  input_items text COLLATE "C" NOT NULL,
  response text COLLATE "C" NOT NULL,
  PRIMARY KEY (gateway_user_id, id)
);
CREATE INDEX responses_by_expiry ON responses (expires_at);

CREATE TABLE response_items (
  gateway_user_id bigint NOT NULL,
  item_id text COLLATE "C" NOT NULL,
  response_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (gateway_user_id, item_id),
  FOREIGN KEY (gateway_user_id, response_id) REFERENCES responses (gateway_user_id, id) ON DELETE CASCADE
);
CREATE INDEX response_items_by_response ON response_items (gateway_user_id, response_id);

CREATE TABLE usage_rollups (
  bucket_start text COLLATE "C" NOT NULL,
  gateway_user_id bigint NOT NULL,
  provider text COLLATE "C" NOT NULL,
  model_requested text COLLATE "C" NOT NULL,
  model_served text COLLATE "C" NOT NULL,
  requests bigint NOT NULL,
  errors bigint NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  cached_tokens bigint NOT NULL,
  cost_nanos bigint NOT NULL,
  ttft_count bigint NOT NULL,
  unpriced_requests bigint NOT NULL,
  last_unpriced_at text COLLATE "C",
  PRIMARY KEY (bucket_start, gateway_user_id, provider, model_requested, model_served)
);
CREATE INDEX usage_rollups_by_user ON usage_rollups (gateway_user_id, bucket_start)
  INCLUDE (requests, prompt_tokens, completion_tokens, cost_nanos);

-- Deleting a user moves their usage to user 0 (as the SQLite trigger of version 9 does).
CREATE FUNCTION usage_rollups_detach_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_rollups (bucket_start, gateway_user_id, provider, model_requested, model_served, requests, errors,
      prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at)
    SELECT bucket_start, 0, provider, model_requested, model_served, requests, errors, prompt_tokens, completion_tokens,
      cached_tokens, cost_nanos, ttft_count, unpriced_requests, last_unpriced_at
    FROM usage_rollups WHERE gateway_user_id = OLD.id
    ON CONFLICT (bucket_start, gateway_user_id, provider, model_requested, model_served) DO UPDATE SET
      requests = usage_rollups.requests + excluded.requests, errors = usage_rollups.errors + excluded.errors,
      prompt_tokens = usage_rollups.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = usage_rollups.completion_tokens + excluded.completion_tokens,
      cached_tokens = usage_rollups.cached_tokens + excluded.cached_tokens, cost_nanos = usage_rollups.cost_nanos + excluded.cost_nanos,
      ttft_count = usage_rollups.ttft_count + excluded.ttft_count,
      unpriced_requests = usage_rollups.unpriced_requests + excluded.unpriced_requests,
      last_unpriced_at = greatest(usage_rollups.last_unpriced_at, excluded.last_unpriced_at);
  DELETE FROM usage_rollups WHERE gateway_user_id = OLD.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER gateway_users_rollup_detach AFTER DELETE ON gateway_users
  FOR EACH ROW EXECUTE FUNCTION usage_rollups_detach_user();

CREATE TABLE budget_alerts (
  id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  gateway_user_id bigint NOT NULL REFERENCES gateway_users (id) ON DELETE CASCADE,
  period_start text COLLATE "C" NOT NULL,
  threshold_percent bigint NOT NULL CHECK (threshold_percent > 0),
  fired_at text COLLATE "C" NOT NULL,
  payload text COLLATE "C" NOT NULL,
  state text COLLATE "C" NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'unsent')),
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at text COLLATE "C",
  delivered_at text COLLATE "C",
  last_error text COLLATE "C",
  UNIQUE (gateway_user_id, period_start, threshold_percent)
);
CREATE INDEX budget_alerts_due ON budget_alerts (next_attempt_at) WHERE state = 'pending';
CREATE INDEX budget_alerts_by_time ON budget_alerts (fired_at);
