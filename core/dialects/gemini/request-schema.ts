/**
 * JSON Schemas of the `generateContent` / `streamGenerateContent` and `countTokens` bodies, after
 * https://ai.google.dev/api/generate-content#request-body and
 * https://ai.google.dev/api/tokens#request-body (`@google/genai` `GenerateContentParameters`). They
 * check what the gateway reads and let every other field through (`additionalProperties` stays open):
 * on a native pass-through the body reaches Gemini untouched, so new fields must not be refused here.
 * Which parts and tools can be translated is decided by `to-canonical.ts`, which names the field.
 */
import type { JsonSchema } from '../../json-schema.ts';

const part: JsonSchema = {
  type: 'object',
  description: 'One part: "text", "inlineData", "functionCall", "functionResponse", or a kind only a native Gemini upstream understands ("fileData", "executableCode", ...).',
  properties: {
    text: { type: 'string', description: 'Text (with "thought": true, the model\'s thinking).' },
    thought: { type: 'boolean', description: 'True on a thinking part.' },
    inlineData: {
      type: 'object',
      required: ['mimeType', 'data'],
      properties: { mimeType: { type: 'string', description: 'e.g. "image/png".' }, data: { type: 'string', description: 'Base64 bytes.' } },
      description: 'Inline bytes (images are translated).',
    },
    functionCall: {
      type: 'object',
      required: ['name'],
      properties: { id: { type: 'string', description: 'The call\'s id.' }, name: { type: 'string', description: 'The function.' }, args: { type: 'object', description: 'Its arguments.' } },
      description: 'A call the model made (in a "model" turn).',
    },
    functionResponse: {
      type: 'object',
      required: ['name'],
      properties: { id: { type: 'string', description: 'The id of the call it answers.' }, name: { type: 'string', description: 'The function.' }, response: { type: 'object', description: 'Its result.' } },
      description: 'A function\'s result (in a "user" turn).',
    },
  },
};

const content: JsonSchema = {
  type: 'object',
  required: ['parts'],
  properties: {
    role: { type: 'string', description: '"user" (the default) or "model".' },
    parts: { type: 'array', items: part, description: 'The turn\'s parts.' },
  },
};

const generationConfig: JsonSchema = {
  type: 'object',
  description: 'Sampling and output settings.',
  properties: {
    temperature: { type: 'number', description: 'Sampling temperature.' },
    topP: { type: 'number', description: 'Nucleus sampling.' },
    topK: { type: 'integer', description: 'Top-k sampling (translated where the target has it).' },
    maxOutputTokens: { type: 'integer', minimum: 1, description: 'Output token limit.' },
    stopSequences: { type: 'array', items: { type: 'string' }, description: 'Stop sequences.' },
    candidateCount: { type: 'integer', minimum: 1, description: 'Answers wanted; only 1 is translated.' },
    responseMimeType: { type: 'string', description: '"text/plain" or "application/json".' },
    responseSchema: { type: 'object', description: 'The answer\'s schema, Gemini\'s OpenAPI subset.' },
    responseJsonSchema: { type: 'object', description: 'The answer\'s schema, a JSON Schema.' },
    thinkingConfig: {
      type: 'object',
      properties: {
        thinkingBudget: { type: 'integer', description: 'Thinking tokens (-1 dynamic, 0 off); translated to a reasoning effort.' },
        thinkingLevel: { type: 'string', description: '"LOW", "MEDIUM" or "HIGH"; translated to a reasoning effort.' },
      },
      description: 'Thinking settings.',
    },
  },
};

const requestProperties: Record<string, JsonSchema> = {
  contents: { type: 'array', items: content, description: 'The conversation.' },
  systemInstruction: { type: ['object', 'string'], description: 'The system prompt, a Content of text parts.' },
  tools: {
    type: 'array',
    description: 'Tools: "functionDeclarations" (translated), or Gemini\'s own ("googleSearch", ...; native only).',
    items: {
      type: 'object',
      properties: {
        functionDeclarations: {
          type: 'array',
          description: 'Functions the model may call.',
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', description: 'Function name.' },
              description: { type: 'string', description: 'What it does.' },
              parameters: { type: 'object', description: 'Arguments, Gemini\'s OpenAPI-subset schema.' },
              parametersJsonSchema: { type: 'object', description: 'Arguments, a JSON Schema.' },
            },
          },
        },
      },
    },
  },
  toolConfig: {
    type: 'object',
    description: 'How the model may call functions.',
    properties: {
      functionCallingConfig: {
        type: 'object',
        properties: {
          mode: { type: 'string', description: '"AUTO", "ANY" or "NONE".' },
          allowedFunctionNames: { type: 'array', items: { type: 'string' }, description: 'The functions it may call.' },
        },
        description: 'Function-calling mode.',
      },
    },
  },
  generationConfig,
};

/** `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`. */
export const generateContentRequestSchema: JsonSchema = {
  type: 'object',
  required: ['contents'],
  properties: requestProperties,
};

/** `POST /v1beta/models/{model}:countTokens`: `contents`, or a whole `generateContentRequest`. */
export const countTokensRequestSchema: JsonSchema = {
  type: 'object',
  properties: {
    contents: requestProperties.contents!,
    generateContentRequest: { type: 'object', properties: requestProperties, description: 'A whole generateContent request to count.' },
  },
};
