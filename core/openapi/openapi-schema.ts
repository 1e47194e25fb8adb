/**
 * Small builders of JSON Schema 2020-12 objects (as OpenAPI 3.1 uses them) for route declarations:
 * every property carries a description, money is USD as a decimal number, token counts are integers.
 */
import type { JsonSchema } from '../json-schema.ts';

/** A `$ref` to the component schema `name`. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
/** A described string. */
export const str = (description: string): JsonSchema => ({ type: 'string', description });
/** A described non-negative integer (token counts, ids, Unix seconds). */
export const int = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
/** An amount in USD (a decimal number, for display; exact figures are integer nano-USD). */
export const usd = (description: string): JsonSchema => ({ type: 'number', description: `${description} (USD).` });
/** An amount in USD, or null. */
export const nullableUsd = (description: string): JsonSchema => ({ type: ['number', 'null'], description: `${description} (USD).` });
/** `schema` or null (2020-12: a "null" type added to `type`). */
export const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
/** An object whose `required` properties are listed first and `optional` ones after. */
export const object = (description: string, required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object', description, required: Object.keys(required), properties: { ...required, ...optional },
});

/** `{object: "list", data: [item...]}` of the component schema `item`. */
export const list = (description: string, item: string): JsonSchema => object(description, {
  object: { const: 'list', description: 'Always `list`.' },
  data: { type: 'array', description: 'The entries.', items: ref(item) },
});

/** An ISO 8601 time or null. */
export const isoOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date-time', description });
