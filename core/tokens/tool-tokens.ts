/**
 * Prompt tokens of tool definitions and tool calls, following OpenAI's cookbook "How to count tokens
 * with tiktoken", section 7 ("Counting tokens for chat completions with tool calls"), for gpt-4o and
 * gpt-4o-mini. Tools are not sent as JSON: OpenAI renders them into the prompt as a compact
 * declaration (`name:description`, then `property:type:description` per parameter), so counting
 * `JSON.stringify(tools)` overcounts by the JSON punctuation and key names. The cookbook's constants:
 * 7 tokens to open each function, 3 to open its properties, 3 per property, per enum 3 per item
 * (and −3 once for the list), 12 to close the tool list. Its published check: the weather-tool
 * request counts 101 prompt tokens, as the API reports for gpt-4o.
 *
 * The cookbook counts top-level properties only. Real schemas (Claude Code's `TodoWrite`, `Edit`)
 * nest objects and arrays of objects; nested properties are counted here the same way as top-level
 * ones (their own 3-token opening, 3 per property), and schema keywords the declaration keeps
 * (`default`, `minimum`, `additionalProperties`, `anyOf`, ...) as their JSON text. This errs high,
 * which a reservation wants. Depth and properties read are bounded (`MAX_SCHEMA_DEPTH`,
 * `MAX_SCHEMA_NODES`); what lies beyond is counted as its JSON text, so nothing goes uncounted.
 *
 * Tool calls (assistant `tool_calls`) and tool results (role `tool`) have no documented overhead. A
 * call is framed like a message (3 tokens, as the cookbook's per-message overhead) plus its recipient
 * (`functions.NAME`, ~3 tokens with the name counted), then its JSON arguments: 6 + name + arguments.
 * A result is a message (the caller counts its 3 + role + content) that also names the call it
 * answers: + the `tool_call_id`'s tokens.
 */
import type { ChatToolCall } from '../canonical/chat-types.ts';

const FUNCTION_OPEN_TOKENS = 7;
const PROPERTIES_OPEN_TOKENS = 3;
const PROPERTY_TOKENS = 3;
const ENUM_OPEN_TOKENS = -3;
const ENUM_ITEM_TOKENS = 3;
const TOOLS_CLOSE_TOKENS = 12;
const TOOL_CALL_TOKENS = 6;

/** Nesting levels of a schema read property by property; deeper ones are counted as JSON text. */
export const MAX_SCHEMA_DEPTH = 6;
/** Properties read per request's tool list; the rest of a schema is counted as JSON text. */
export const MAX_SCHEMA_NODES = 4096;

/** Keywords the declaration carries in the `property:type:description` line or as nested properties. */
const RENDERED_KEYWORDS = new Set(['type', 'description', 'enum', 'properties', 'items', 'required', 'title', '$schema']);

type Count = (text: string) => number;
type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const withoutFinalPeriod = (text: string) => (text.endsWith('.') ? text.slice(0, -1) : text);

/**
 * Tokens of a chat request's `tools` (OpenAI chat shape: `{type:"function", function:{name,
 * description, parameters}}`; a tool of another shape is counted as its JSON text); 0 for none.
 */
export function toolDefinitionTokens(tools: unknown, count: Count): number {
  if (!Array.isArray(tools) || tools.length === 0) return 0;
  const budget = { nodes: MAX_SCHEMA_NODES };
  let tokens = TOOLS_CLOSE_TOKENS;
  for (const tool of tools) {
    const fn = isSchema(tool) && isSchema(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string') {
      tokens += count(JSON.stringify(tool) ?? '');
      continue;
    }
    const description = typeof fn.description === 'string' ? withoutFinalPeriod(fn.description) : '';
    tokens += FUNCTION_OPEN_TOKENS + count(`${fn.name}:${description}`);
    if (isSchema(fn.parameters)) tokens += schemaTokens(fn.parameters, count, 0, budget);
  }
  return tokens;
}

/** Tokens of an object schema's properties (and, for an array, of its items' properties). */
function schemaTokens(schema: Schema, count: Count, depth: number, budget: { nodes: number }): number {
  let tokens = extraKeywordTokens(schema, count);
  if (isSchema(schema.items)) tokens += schemaTokens(schema.items, count, depth, budget);
  const properties = isSchema(schema.properties) ? schema.properties : null;
  if (!properties) return tokens;
  const names = Object.keys(properties);
  if (names.length === 0) return tokens;
  if (depth >= MAX_SCHEMA_DEPTH || budget.nodes < names.length) return tokens + count(JSON.stringify(properties));
  budget.nodes -= names.length;
  tokens += PROPERTIES_OPEN_TOKENS;
  for (const name of names) tokens += propertyTokens(name, properties[name], count, depth, budget);
  return tokens;
}

function propertyTokens(name: string, value: unknown, count: Count, depth: number, budget: { nodes: number }): number {
  const property = isSchema(value) ? value : {};
  let tokens = PROPERTY_TOKENS;
  if (Array.isArray(property.enum)) {
    tokens += ENUM_OPEN_TOKENS;
    for (const item of property.enum) tokens += ENUM_ITEM_TOKENS + count(typeof item === 'string' ? item : JSON.stringify(item) ?? '');
  }
  const type = typeof property.type === 'string' ? property.type : property.type === undefined ? '' : JSON.stringify(property.type);
  const description = typeof property.description === 'string' ? withoutFinalPeriod(property.description) : '';
  tokens += count(`${name}:${type}:${description}`);
  return tokens + schemaTokens(property, count, depth + 1, budget);
}

/** Schema keywords other than the rendered ones (`default`, `minimum`, `anyOf`, ...), as JSON text. */
function extraKeywordTokens(schema: Schema, count: Count): number {
  let extra: Schema | null = null;
  for (const key of Object.keys(schema)) {
    if (RENDERED_KEYWORDS.has(key)) continue;
    (extra ??= {})[key] = schema[key];
  }
  return extra ? count(JSON.stringify(extra)) : 0;
}

/** Tokens of an assistant message's tool calls: per call its framing, name and JSON arguments. */
export function toolCallTokens(calls: readonly ChatToolCall[] | undefined, count: Count): number {
  let tokens = 0;
  for (const call of calls ?? []) tokens += TOOL_CALL_TOKENS + count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
  return tokens;
}
