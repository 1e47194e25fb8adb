/**
 * Converts the gateway's validation schemas (JSON Schema draft-07, as Ajv validates them; see
 * `json-schema.ts`) to JSON Schema 2020-12, the dialect of OpenAPI 3.1 Schema Objects. The mapping
 * follows the 2019-09 / 2020-12 release notes (json-schema.org): `definitions` → `$defs`, array-form
 * `items` → `prefixItems` (and `additionalItems` → `items`), `dependencies` → `dependentRequired` /
 * `dependentSchemas`, OpenAPI 3.0's `nullable: true` → a `"null"` type; `$schema` and Ajv-only
 * keywords are dropped. Data (`enum`, `const`, `default`, `examples`) is copied, never walked.
 */
import type { JsonSchema } from '../json-schema.ts';

/** Keywords Ajv (or its plugins: ajv-keywords, ajv-errors) understands that are not JSON Schema. */
const AJV_ONLY_KEYWORDS = new Set([
  '$async', '$schema', 'errorMessage', 'instanceof', 'typeof', 'regexp', 'transform', 'dynamicDefaults',
  'allRequired', 'anyRequired', 'oneRequired', 'patternRequired', 'prohibited', 'deepProperties', 'deepRequired',
  'select', 'selectCases', 'selectDefault', 'range', 'exclusiveRange', 'uniqueItemProperties',
  'formatMinimum', 'formatMaximum', 'formatExclusiveMinimum', 'formatExclusiveMaximum',
]);

/** Keywords whose value is one subschema. */
const SCHEMA_KEYWORDS = new Set([
  'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties',
]);

/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

export interface ToJsonSchema2020Options {
  /**
   * JSON pointer (URI fragment form, e.g. `#/components/schemas/ChatCompletionRequest`) where the
   * result will live. Local `$ref`s (`#/...`) of the source are rebased onto it, because inside an
   * OpenAPI document `#` means the document, not the schema. Default `#` (a standalone schema).
   */
  basePointer?: string;
}

/** A draft-07 schema as a new JSON Schema 2020-12 schema. The input is not modified. */
export function toJsonSchema2020(schema: JsonSchema, options: ToJsonSchema2020Options = {}): JsonSchema {
  return convert(schema, options.basePointer ?? '#');
}

function convert(schema: JsonSchema, base: string): JsonSchema {
  const out: Record<string, unknown> = {};
  const sub = (value: unknown) => convertSubschema(value, base);
  for (const [keyword, value] of Object.entries(schema)) {
    if (AJV_ONLY_KEYWORDS.has(keyword) || keyword === 'nullable') continue;
    if (keyword === '$ref' && typeof value === 'string') out.$ref = rebaseRef(value, base);
    else if (keyword === 'definitions' || SCHEMA_MAP_KEYWORDS.has(keyword)) {
      const target = keyword === 'definitions' ? '$defs' : keyword;
      out[target] = { ...(out[target] as object | undefined), ...mapValues(value as Record<string, unknown>, sub) };
    } else if (keyword === 'items') {
      if (Array.isArray(value)) out.prefixItems = value.map(sub);
      else out.items = sub(value);
    } else if (keyword === 'additionalItems') {
      // Only meaningful beside array-form `items`, whose 2020-12 successor (`prefixItems`) hands the rest to `items`.
      if (Array.isArray(schema.items)) out.items = sub(value);
    } else if (keyword === 'dependencies') convertDependencies(value as Record<string, unknown>, sub, out);
    else if (SCHEMA_KEYWORDS.has(keyword)) out[keyword] = sub(value);
    else if (SCHEMA_ARRAY_KEYWORDS.has(keyword)) out[keyword] = (value as unknown[]).map(sub);
    else out[keyword] = structuredClone(value);
  }
  if (schema.nullable === true) addNullType(out);
  return out;
}

/** A subschema position: boolean schemas (`true` / `false`) stay as they are. */
function convertSubschema(value: unknown, base: string): unknown {
  return typeof value === 'boolean' ? value : convert(value as JsonSchema, base);
}

function mapValues(map: Record<string, unknown>, fn: (value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, fn(value)]));
}

/** draft-07 `dependencies` mixes property lists and schemas; 2020-12 splits them. */
function convertDependencies(dependencies: Record<string, unknown>, sub: (value: unknown) => unknown, out: Record<string, unknown>): void {
  for (const [name, dependency] of Object.entries(dependencies)) {
    if (Array.isArray(dependency)) out.dependentRequired = { ...(out.dependentRequired as object | undefined), [name]: [...(dependency as unknown[])] };
    else out.dependentSchemas = { ...(out.dependentSchemas as object | undefined), [name]: sub(dependency) };
  }
}

/** `#/definitions/a` → `<base>/$defs/a`; a segment named `definitions` inside a name map (a property) stays. */
function rebaseRef(ref: string, base: string): string {
  if (!ref.startsWith('#')) return ref;
  const segments = ref.slice(1).split('/');
  for (let i = 1; i < segments.length; i++) {
    const parentIsMap = i > 1 && SCHEMA_MAP_KEYWORDS.has(segments[i - 1]!);
    if (segments[i] === 'definitions' && !parentIsMap) segments[i] = '$defs';
  }
  return `${base}${segments.join('/')}`;
}

function addNullType(out: Record<string, unknown>): void {
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.type)) out.type = out.type.includes('null') ? out.type : [...(out.type as unknown[]), 'null'];
  else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
}
