/**
 * JSON Schemas of `POST /v1/messages` and `POST /v1/messages/count_tokens` bodies, following
 * Anthropic's API reference (https://platform.claude.com/docs/en/api/messages ,
 * https://platform.claude.com/docs/en/api/messages-count-tokens ; `@anthropic-ai/sdk`
 * `MessageCreateParamsBase`; docs/provider-wire-formats.md §2). They check what the gateway reads and
 * let every other field through (`additionalProperties` stays open): on a native pass-through the
 * client's body reaches Anthropic untouched, so beta fields and new block kinds must not be refused
 * here. Block-specific rules (which blocks a role may hold, image sources, server tools) are checked
 * by `to-canonical.ts`, which can name the field in a clearer message than a schema error.
 * The same schemas feed the OpenAPI document through the dialect's route declarations.
 */
import type { JsonSchema } from '../../json-schema.ts';
import { modelField } from '../model-field.ts';

const cacheControl: JsonSchema = {
  type: ['object', 'null'],
  description: 'Prompt-caching breakpoint, e.g. {"type":"ephemeral"}. Forwarded on native pass-through, dropped when translating.',
};

const textBlock: JsonSchema = {
  type: 'object',
  required: ['type', 'text'],
  properties: {
    type: { const: 'text', description: 'Always "text".' },
    text: { type: 'string', description: 'The text.' },
    cache_control: cacheControl,
  },
};

/** Any block: the fields of the kinds the gateway translates are typed wherever they appear. */
const contentBlock: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", or a kind only a native upstream understands (e.g. "document").' },
    text: { type: 'string', description: 'The text of a "text" block.' },
    source: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', description: '"base64" (with media_type and data) or "url" (with url).' } },
      description: 'The image of an "image" block.',
    },
    id: { type: 'string', description: 'The id of a "tool_use" block.' },
    name: { type: 'string', description: 'The tool a "tool_use" block calls.' },
    input: { type: 'object', description: 'The arguments of a "tool_use" block, as an object.' },
    tool_use_id: { type: 'string', description: 'The "tool_use" a "tool_result" block answers.' },
    content: {
      type: ['string', 'array'],
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string', description: '"text" or "image".' } } },
      description: 'The result of a "tool_result" block: a string or text blocks.',
    },
    is_error: { type: 'boolean', description: 'True when a "tool_result" reports a failed tool call.' },
    cache_control: cacheControl,
  },
};

const message: JsonSchema = {
  type: 'object',
  required: ['role', 'content'],
  properties: {
    role: { enum: ['user', 'assistant', 'system'], description: 'Author of the turn. "system" entries (sent by Claude Code) act as system prompts in place.' },
    // One type list rather than anyOf, so that a bad block is reported by its own path.
    content: { type: ['string', 'array'], items: contentBlock, description: 'A string, or an array of content blocks.' },
  },
};

const tool: JsonSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, description: 'The tool\'s name, as the model will call it.' },
    description: { type: 'string', description: 'What the tool does, for the model.' },
    input_schema: { type: 'object', description: 'JSON Schema of the tool\'s input (client tools).' },
    type: {
      type: ['string', 'null'],
      description: 'Absent or "custom" for a client tool; any other value (e.g. "web_search_20250305") is a server tool, served only by a native Anthropic upstream.',
    },
    cache_control: cacheControl,
  },
};

const toolChoice: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['auto', 'any', 'tool', 'none'], description: '"auto" (the model decides), "any" (some tool), "tool" (the one named), "none".' },
    name: { type: 'string', description: 'The tool to call, with type "tool".' },
    disable_parallel_tool_use: { type: 'boolean', description: 'true: at most one tool call per turn.' },
  },
  description: 'How the model may use the tools.',
};

const thinking: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"enabled" (with budget_tokens), "disabled", or "adaptive" where the model supports it.' },
    budget_tokens: { type: 'integer', minimum: 0, description: 'Tokens the model may spend thinking (Anthropic requires at least 1024, below max_tokens). Translated to reasoning_effort for other upstreams.' },
  },
  description: 'Extended thinking.',
};

/** The fields both endpoints share; `max_tokens` and `stream` belong to `POST /v1/messages` only. */
const commonProperties: Record<string, JsonSchema> = {
  model: modelField('anthropic/claude-sonnet-4-5'),
  messages: { type: 'array', minItems: 1, items: message, description: 'The conversation so far, oldest first.' },
  system: { type: ['string', 'array'], items: textBlock, description: 'The system prompt: a string or an array of text blocks.' },
  tools: { type: 'array', items: tool, description: 'Tools the model may call.' },
  tool_choice: toolChoice,
  thinking,
};

export const messagesRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  additionalProperties: true,
  properties: {
    ...commonProperties,
    max_tokens: { type: 'integer', minimum: 1, description: 'Upper bound on generated tokens. Also sizes the budget and token-limit reservation.' },
    stream: { type: 'boolean', description: 'true: answer as server-sent Messages events (message_start ... message_stop).' },
    stop_sequences: { type: 'array', items: { type: 'string' }, description: 'Sequences where generation stops.' },
    temperature: { type: 'number', minimum: 0, maximum: 1, description: 'Sampling temperature, 0 to 1.' },
    top_p: { type: 'number', minimum: 0, maximum: 1, description: 'Nucleus sampling: only tokens within this probability mass are considered.' },
    top_k: { type: 'integer', minimum: 0, description: 'Sample only from the k most likely tokens. Dropped when the upstream is not Anthropic.' },
    metadata: {
      type: 'object',
      properties: { user_id: { type: ['string', 'null'], description: 'An opaque id of your end user.' } },
      description: 'Request metadata; user_id is passed on as OpenAI\'s "user" to other upstreams.',
    },
  },
};

export const countTokensRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model', 'messages'],
  additionalProperties: true,
  properties: commonProperties,
};
