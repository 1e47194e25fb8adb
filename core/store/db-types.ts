/**
 * Kysely table types for `schema.sql` (keep the two in step). Timestamps are ISO-8601 UTC strings;
 * money is integer micro-USD (budget limits) or nano-USD (costs and spend); booleans are 0/1.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export type BudgetPeriod = 'daily' | 'weekly' | 'monthly' | 'never';

export interface GatewayUsersTable {
  id: Generated<number>;
  name: string;
  email: string | null;
  disabled: Generated<number>;
  budget_limit_micros: number | null;
  budget_period: Generated<BudgetPeriod>;
  rpm: number | null;
  tpm: number | null;
  /** Requests in flight at once; null = the rate-limit plugin's default. */
  max_concurrent: number | null;
  created_at: string;
  updated_at: string;
  /** Integer nano-USD spent in the period starting at `budget_period_start`. */
  budget_spent_nanos: Generated<number>;
  budget_period_start: string | null;
  /** JSON array of integer percents of the limit; null = the budget plugin's `alerts.thresholds`. */
  budget_alert_thresholds: string | null;
  /** The team the user belongs to (schema v23; at most one); null = none. */
  team_id: number | null;
}

/**
 * `teams` (schema v23): a group of gateway users with its own budget (the same columns as a user's),
 * rpm / tpm / concurrency limits (null = no team limit) and model allow-list (JSON array of glob
 * patterns, as `api_keys.models`; null = every model).
 */
export interface TeamsTable {
  id: Generated<number>;
  name: string;
  budget_limit_micros: number | null;
  budget_period: Generated<BudgetPeriod>;
  /** Integer nano-USD spent in the period starting at `budget_period_start`. */
  budget_spent_nanos: Generated<number>;
  budget_period_start: string | null;
  /** JSON array of integer percents of the limit; null = the budget plugin's `alerts.thresholds`. */
  budget_alert_thresholds: string | null;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  models: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  gateway_user_id: number;
  name: string | null;
  key_hash: string;
  key_prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  rpm: number | null;
  tpm: number | null;
  /** JSON array of glob patterns of the models the key may call; null = all (`core/accounts/api-keys.ts`). */
  models: string | null;
  /** Canonical JSON object of the key's tags; null = none (`core/accounts/key-tags.ts`, schema v21). */
  tags: Generated<string | null>;
}

export interface AdminUsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  created_at: string;
}

export interface LlmRequestsTable {
  id: Generated<number>;
  request_id: string;
  gateway_user_id: number | null;
  api_key_id: number | null;
  provider: string | null;
  model_requested: string | null;
  model_served: string | null;
  status: number;
  error_code: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  latency_ms: number;
  ttft_ms: number | null;
  stream: number;
  created_at: string;
  cache_write_tokens: number | null;
  /** Integer nano-USD; null when nothing was billed. */
  cost_nanos: number | null;
  usage_estimated: Generated<number>;
  unpriced: Generated<number>;
  /** The endpoint (dialect operation), e.g. `chat.completions`, `messages.create`. */
  endpoint: string | null;
  /** JSON array of the upstream attempts (`core/proxy/upstream-attempts.ts` `UpstreamAttempt`); null when none. */
  attempts: string | null;
  /** The non-secret fingerprint of the upstream credential that served (`…a1b2`, schema.sql v25); null when no upstream was reached. */
  upstream_key: string | null;
  /** The upstream's usage report as read (OpenAI-shaped `usage` JSON); null when none came. */
  usage_reported: string | null;
  /** JSON of the price the row was billed at (`ModelPrice`, USD per million tokens); null when unpriced. */
  billed_price: string | null;
  /** The SDK plugin whose failure ended the request (`plugin_error`); null otherwise. */
  error_plugin: string | null;
  /** JSON object of the fields SDK plugins added (`logField`); null when none. */
  plugin_fields: string | null;
  /** The tags of the key that made the request, as stored on the key then; null = none (schema v21). */
  tags: string | null;
  /** The requester's team at the time (schema v23); null = none. */
  team_id: number | null;
}

export interface ModelPricingTable {
  model: string;
  provider: string | null;
  input_price_per_million: number;
  output_price_per_million: number;
  cached_input_price_per_million: number | null;
  source: Generated<'manual' | 'import'>;
  updated_at: string;
  cache_write_price_per_million: number | null;
}

export interface ProviderCredentialsTable {
  id: Generated<number>;
  gateway_user_id: number | null;
  provider: string;
  ciphertext: Buffer;
  nonce: Buffer;
  auth_tag: Buffer;
  key_id: string;
  hint: string;
  base_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface ModelCatalogTable {
  provider: string;
  model: string;
  display_name: string | null;
  created: Generated<number>;
  owned_by: string;
  fetched_at: string;
  /** The model's place in the upstream's list, from 0. */
  position: Generated<number>;
}

/** `admin_sessions`: a signed-in admin; the cookie's token is stored only as its SHA-256. */
export interface AdminSessionsTable {
  token_hash: string;
  admin_user_id: number;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  /** 'admin' | 'viewer' | 'team-admin' (schema v20); defaults to 'admin'. */
  role: Generated<string>;
  /** JSON array of the team names a team-admin manages; '[]' otherwise. */
  teams: Generated<string>;
}

/** `portal_sessions` (schema v22): a gateway user signed in to the self-service portal; only the token's SHA-256 is kept. */
export interface PortalSessionsTable {
  token_hash: string;
  gateway_user_id: number;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

/** `responses`: an OpenAI Responses answer kept by the response-store plugin, per gateway user. */
export interface ResponsesTable {
  gateway_user_id: number;
  /** The response id the client saw. */
  id: string;
  created_at: string;
  expires_at: string;
  model: string;
  provider: string;
  /** 1 when the native upstream stored it itself. */
  served_natively: number;
  previous_response_id: string | null;
  /** JSON array of the request's own input items. */
  input_items: string;
  /** JSON of the final response object. */
  response: string;
  /** UTF-8 bytes it takes: `input_items`, `response` and its `response_items.item` copies (v15). */
  size_bytes: Generated<number>;
}

/** `response_items`: the output item ids of each stored response, for `item_reference` lookups. */
export interface ResponseItemsTable {
  gateway_user_id: number;
  item_id: string;
  response_id: string;
  /** JSON of the output item itself (v15), read by an `item_reference`; NULL only in rows written before. */
  item: string | null;
}

/** `response_totals`: each user's stored responses and their bytes, kept by triggers on `responses` (v15). */
export interface ResponseTotalsTable {
  gateway_user_id: number;
  response_count: number;
  bytes: number;
}

/**
 * `plugin_kv`: the key-value store of SDK plugins (schema.sql v18, `plugin-kv.ts`). `value` is text on
 * SQLite and the UTF-8 bytes (bytea) on PostgreSQL; times are ms since the epoch.
 */
export interface PluginKvTable {
  plugin: string;
  key: string;
  value: string | Buffer;
  /** UTF-8 bytes of the key and the value. */
  size_bytes: number;
  /** When it expires, ms since the epoch; null = never. */
  expires_at: number | null;
  /** When it was written, ms since the epoch (eviction order). */
  written_at: number;
}

/** `plugin_kv_totals`: each plugin's bytes in `plugin_kv`, kept by triggers (v18). */
export interface PluginKvTotalsTable {
  plugin: string;
  bytes: number;
}

/**
 * Usage per UTC quarter hour (`bucket_start`, ISO-8601), user, provider and model, kept by the log writer
 * on `llm_requests` (schema.sql v9). Sentinels: `gateway_user_id` 0 = none, '' = no provider/model.
 */
export interface UsageRollupsTable {
  bucket_start: string;
  gateway_user_id: number;
  provider: string;
  model_requested: string;
  model_served: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** Integer nano-USD. */
  cost_nanos: number;
  ttft_count: number;
  unpriced_requests: number;
  last_unpriced_at: string | null;
}

/** `budget_alerts`: each threshold crossed per user and period, and its webhook delivery (schema.sql v12). */
export interface BudgetAlertsTable {
  id: Generated<number>;
  gateway_user_id: number;
  period_start: string;
  threshold_percent: number;
  fired_at: string;
  /** The webhook's JSON body, exactly as sent. */
  payload: string;
  state: BudgetAlertState;
  attempts: Generated<number>;
  next_attempt_at: string | null;
  delivered_at: string | null;
  last_error: string | null;
}

/** `pending`: to send (again) at `next_attempt_at`; `failed`: every attempt failed; `unsent`: no webhook configured. */
export type BudgetAlertState = 'pending' | 'delivered' | 'failed' | 'unsent';

/** `usage_report_credentials`: one sealed admin credential per provider id, for its usage and cost reports (schema.sql v19). */
export interface UsageReportCredentialsTable {
  provider: string;
  /** The report API that speaks for it (`core/reconcile/report-sources.ts`): `openai`, `anthropic`. */
  kind: string;
  ciphertext: Buffer;
  nonce: Buffer;
  auth_tag: Buffer;
  key_id: string;
  hint: string;
  base_url: string | null;
  /** JSON array of the provider-side key ids Tollgate uses; null = not told. */
  gateway_key_ids: string | null;
  /** JSON object: the provider's own key id → the fingerprint of the Tollgate credential it is (schema.sql v25); null = not told. */
  key_map: string | null;
  created_at: string;
  updated_at: string;
}

export type ReconciliationTrigger = 'cli' | 'schedule' | 'api';
export type ReconciliationState = 'ok' | 'flagged' | 'failed';
export type ReconciliationAlertState = 'pending' | 'delivered' | 'failed' | 'unsent';

/** `reconciliation_runs`: one run of `tollgate reconcile` or the daily job (schema.sql v19). Days are UTC `YYYY-MM-DD`, inclusive. */
export interface ReconciliationRunsTable {
  id: Generated<number>;
  started_at: string;
  finished_at: string;
  from_day: string;
  to_day: string;
  /** JSON array of provider ids. */
  providers: string;
  trigger: ReconciliationTrigger;
  state: ReconciliationState;
  flagged_rows: number;
  /** Integer nano-USD. */
  ledger_cost_nanos: number;
  /** Integer nano-USD. */
  report_cost_nanos: number;
  error: string | null;
  alert_state: ReconciliationAlertState | null;
}

/** `reconciliation_differences`: one day x provider x model of a run, both sides (schema.sql v19). */
export interface ReconciliationDifferencesTable {
  run_id: number;
  day: string;
  provider: string;
  model: string;
  ledger_present: number;
  ledger_requests: number;
  ledger_failed_requests: number;
  ledger_input_tokens: number;
  ledger_cached_input_tokens: number;
  ledger_cache_write_tokens: number;
  ledger_output_tokens: number;
  ledger_cost_nanos: number;
  report_present: number;
  report_requests: number | null;
  report_input_tokens: number;
  report_cached_input_tokens: number;
  report_cache_write_tokens: number;
  report_output_tokens: number;
  report_cost_nanos: number | null;
  flagged: number;
  /** JSON array of `{code, message}`. */
  causes: string;
}

/** One row of the audit log (schema v24, `core/audit/`): append-only, each row hash-chained to the previous. */
export interface AuditLogTable {
  /** Given by the appender: the chain head's id + 1, so a gap is a deleted row. */
  id: number;
  /** ISO-8601 UTC. */
  at: string;
  /** Admin username, `cli:<os user>`, a portal user's email, or `system`. */
  actor: string;
  actor_kind: 'admin' | 'cli' | 'portal' | 'system';
  role: string | null;
  ip: string | null;
  /** e.g. `users.update`. */
  action: string;
  object_type: string | null;
  object_id: string | null;
  /** Canonical JSON (sorted keys), secrets redacted; null = not told. */
  before: string | null;
  after: string | null;
  request_id: string | null;
  /** The previous row's `hash` (genesis: 64 zeros). */
  prev_hash: string;
  /** Hex SHA-256 over `prev_hash` and the row's fields (`core/audit/audit-hash.ts`). */
  hash: string;
}

/** The one row naming the audit chain's newest id and hash (id 0 and 64 zeros before the first row). */
export interface AuditChainHeadTable {
  singleton: number;
  last_id: number;
  last_hash: string;
}

/** `reconciliation_key_differences`: one day × provider × model × provider key id of a run (schema.sql v25). */
export interface ReconciliationKeyDifferencesTable {
  run_id: number;
  day: string;
  provider: string;
  model: string;
  /** The provider's own key id (`api_key_id`). */
  api_key_id: string;
  /** The Tollgate credential's fingerprint the operator mapped it to; null = not mapped. */
  upstream_key: string | null;
  /** 1 when the key is Tollgate's (mapped, or listed in `gateway_key_ids`). */
  tollgate_key: number;
  ledger_requests: number;
  ledger_input_tokens: number;
  ledger_output_tokens: number;
  ledger_cost_nanos: number;
  report_requests: number | null;
  report_input_tokens: number;
  report_output_tokens: number;
  /** The report's tokens at the price table's price, integer nano-USD; null when the model has no price. */
  report_cost_nanos: number | null;
  flagged: number;
  /** JSON array of `{code, message}`. */
  causes: string;
}

/** `reconciliation_alerts`: a flagged run's webhook, the durable queue (schema.sql v25). */
export interface ReconciliationAlertsTable {
  run_id: number;
  payload: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
  last_error: string | null;
}

export interface Database {
  audit_log: AuditLogTable;
  audit_chain_head: AuditChainHeadTable;
  reconciliation_key_differences: ReconciliationKeyDifferencesTable;
  reconciliation_alerts: ReconciliationAlertsTable;
  usage_report_credentials: UsageReportCredentialsTable;
  reconciliation_runs: ReconciliationRunsTable;
  reconciliation_differences: ReconciliationDifferencesTable;
  budget_alerts: BudgetAlertsTable;
  usage_rollups: UsageRollupsTable;
  admin_sessions: AdminSessionsTable;
  portal_sessions: PortalSessionsTable;
  gateway_users: GatewayUsersTable;
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  admin_users: AdminUsersTable;
  llm_requests: LlmRequestsTable;
  model_pricing: ModelPricingTable;
  provider_credentials: ProviderCredentialsTable;
  model_catalog: ModelCatalogTable;
  responses: ResponsesTable;
  response_items: ResponseItemsTable;
  response_totals: ResponseTotalsTable;
  plugin_kv: PluginKvTable;
  plugin_kv_totals: PluginKvTotalsTable;
}

export type GatewayUser = Selectable<GatewayUsersTable>;
export type NewGatewayUser = Insertable<GatewayUsersTable>;
export type GatewayUserUpdate = Updateable<GatewayUsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Team = Selectable<TeamsTable>;
export type NewLlmRequest = Insertable<LlmRequestsTable>;
