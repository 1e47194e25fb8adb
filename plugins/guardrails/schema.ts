/**
 * The guardrails plugin's configuration: its JSON Schema (validated when the manifest loads, defaults
 * filled in) and the TypeScript shape the schema guarantees. What the schema cannot state (regexes
 * that compile, a rule's kind) is checked by `checkConfig` in `rules.ts`.
 */
import type { JsonSchema } from '../../core/sdk/index.ts';

/** Which texts a rule reads: the request's (`input`), the answer's (`output`) or both. */
export type Direction = 'input' | 'output';
export type ApplyTo = Direction | 'both';

/** An operator's regex, compiled once at start. */
export interface PatternConfig {
  pattern: string;
  flags?: string;
  maxMatchChars?: number;
  /** What its matches are called in `[REDACTED:<id>]`; default the rule's name. */
  id?: string;
}

/** An HTTP endpoint that decides on the request's texts. */
export interface ExternalConfig {
  url: string;
  timeoutMs: number;
  failMode: 'open' | 'closed';
  /** Extra request headers (an authorization token for the check service). */
  headers?: Record<string, string>;
}

/** Which requests a rule applies to; each list given must match (absent lists match everything). */
export interface MatchConfig {
  users?: string[];
  keys?: number[];
  models?: string[];
}

export interface RuleConfig {
  name: string;
  detectors?: string[];
  patterns?: PatternConfig[];
  external?: ExternalConfig;
  applyTo: ApplyTo;
  action: 'block' | 'redact';
  match?: MatchConfig;
}

export interface GuardrailsConfig {
  rules: RuleConfig[];
}

/** The built-in detectors' ids, as `detectors.ts` names them. */
export const DETECTOR_IDS = ['email', 'phone', 'payment-card', 'iban', 'secret'] as const;

const patternSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['pattern'],
  description: 'An operator\'s regular expression (JavaScript syntax, without slashes), compiled once at start.',
  properties: {
    pattern: { type: 'string', minLength: 1, description: 'The regex source, e.g. "EMP-[0-9]{6}". Bound every repetition ({1,40}, not +): streams hold back maxMatchChars.' },
    flags: { type: 'string', description: 'Any of i, m, s, u, v (g is implied).' },
    maxMatchChars: { type: 'integer', minimum: 1, maximum: 65536, description: 'The longest text a match can span, in UTF-16 units (default 256): what a stream holds back for this pattern; longer matches are ignored.' },
    id: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'The name its matches get in [REDACTED:<id>]; default the rule\'s name.' },
  },
};

const externalSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['url'],
  description: 'An HTTP endpoint deciding on the request: POSTed {"texts": [...], "direction": "input"}, it answers {"block": bool, "reason"?: string}. Such a rule has no detectors or patterns, applies to input and blocks.',
  properties: {
    url: { type: 'string', pattern: '^https?://', description: 'The check\'s URL (http or https).' },
    timeoutMs: { type: 'integer', minimum: 1, maximum: 60000, default: 1000, description: 'How long to wait for its answer, ms; keep it below the entry\'s hookTimeoutMs (default 5000), or the hook times out first (500 plugin_error).' },
    failMode: { enum: ['open', 'closed'], default: 'closed', description: 'When the check times out, fails or answers nonsense: "open" lets the request through, "closed" blocks it.' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra headers sent to the check (e.g. authorization); values may use ${ENV} substitution.' },
  },
};

const matchSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  description: 'Which requests the rule applies to: every list given must match; absent, the rule applies to every request.',
  properties: {
    users: { type: 'array', items: { type: 'string' }, description: 'Gateway user names.' },
    keys: { type: 'array', items: { type: 'integer' }, description: 'API key ids (tollgate keys list).' },
    models: { type: 'array', items: { type: 'string' }, description: 'Globs over the model the client asked for, as written ("openai/*", "claude-*"): * is any run of characters, ? one.' },
  },
};

const ruleSchema: JsonSchema = {
  type: 'object', additionalProperties: false, required: ['name', 'applyTo', 'action'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'Unique rule name (lowercase letters, digits, - and _): shown in the block message, the log field guardrails.<name> and the metric label.' },
    detectors: { type: 'array', items: { enum: [...DETECTOR_IDS] }, description: `Built-in detectors: ${DETECTOR_IDS.join(', ')}.` },
    patterns: { type: 'array', items: patternSchema, description: 'Regexes of the operator\'s own.' },
    external: externalSchema,
    applyTo: { enum: ['input', 'output', 'both'], description: 'Which texts the rule reads: the request\'s (every role\'s messages), the answer\'s, or both.' },
    action: { enum: ['block', 'redact'], description: '"block": refuse with 400 content_blocked naming the rule; "redact": replace each match with [REDACTED:<detector>].' },
    match: matchSchema,
  },
};

export const configSchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    rules: { type: 'array', items: ruleSchema, default: [], description: 'The rules, in order: for each text, block rules run before redact rules, and each in this order.' },
  },
};
