/**
 * Tool definitions and tool calls in the prompt estimate (`core/tokens/tool-tokens.ts`): the cookbook's
 * framing for flat schemas, nested properties counted the same way, bounded reading of deep or huge
 * schemas (nothing left uncounted), and tool calls / results with their framing.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, toolCallTokens, toolDefinitionTokens } from '../../../core/tokens/tool-tokens.ts';
import { requestPromptTokens } from '../../../core/tokens/prompt-tokens.ts';
import { DEFAULT_PROMPT_TOKEN_RULES } from '../../../core/tokens/prompt-token-rules.ts';

const fn = (name: string, parameters: Record<string, unknown>, description = 'Does a thing.') => ({ type: 'function', function: { name, description, parameters } });

describe('tool definition tokens', () => {
  test('a flat function is 12 + 7 + name:description + 3 + per property 3 + name:type:description', () => {
    const tools = [fn('lookup', { type: 'object', properties: { id: { type: 'string', description: 'The id.' } }, required: ['id'] })];
    assert.equal(toolDefinitionTokens(tools, countTokens), 12 + 7 + countTokens('lookup:Does a thing') + 3 + 3 + countTokens('id:string:The id'));
  });

  test('no tools, or an empty list, cost nothing', () => {
    assert.equal(toolDefinitionTokens(undefined, countTokens), 0);
    assert.equal(toolDefinitionTokens([], countTokens), 0);
  });

  test('nested object and array-item properties are counted like top-level ones', () => {
    const flat = fn('todo', { type: 'object', properties: { todos: { type: 'array', description: 'The list' } } });
    const nested = fn('todo', { type: 'object', properties: { todos: { type: 'array', description: 'The list', items: { type: 'object', properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'done'] } } } } } });
    const extra = toolDefinitionTokens([nested], countTokens) - toolDefinitionTokens([flat], countTokens);
    assert.equal(extra, 3 + (3 + countTokens('content:string:')) + (3 - 3 + 3 + countTokens('pending') + 3 + countTokens('done') + countTokens('status:string:')));
  });

  test('schema keywords the declaration keeps are counted as JSON, a tool of another shape as its JSON', () => {
    const plain = toolDefinitionTokens([fn('f', { type: 'object', properties: { n: { type: 'number' } } })], countTokens);
    const bounded = toolDefinitionTokens([fn('f', { type: 'object', properties: { n: { type: 'number', minimum: 0, maximum: 10 } } })], countTokens);
    assert.equal(bounded - plain, countTokens('{"minimum":0,"maximum":10}'));
    const custom = { type: 'custom', name: 'grammar', format: { type: 'lark' } };
    assert.equal(toolDefinitionTokens([custom], countTokens), 12 + countTokens(JSON.stringify(custom)));
  });

  test('a schema nested deeper than the bound is counted as JSON text below it', () => {
    let schema: Record<string, unknown> = { type: 'string', description: 'leaf' };
    for (let i = 0; i < MAX_SCHEMA_DEPTH + 3; i++) schema = { type: 'object', properties: { [`level${i}`]: schema } };
    const tokens = toolDefinitionTokens([fn('deep', schema)], countTokens);
    assert.ok(tokens > 12 + 7 + MAX_SCHEMA_DEPTH * 6, String(tokens));
  });

  test('a schema with more properties than the bound is still counted in full, as JSON beyond it', () => {
    const properties = Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES + 10 }, (_, i) => [`p${i}`, { type: 'string' }]));
    const tokens = toolDefinitionTokens([fn('wide', { type: 'object', properties })], countTokens);
    assert.ok(tokens >= countTokens(JSON.stringify(properties)), String(tokens));
  });
});

describe('tool calls and results', () => {
  test('a call costs 6 + its name + its JSON arguments', () => {
    const calls = [{ id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
    assert.equal(toolCallTokens(calls, countTokens), 6 + countTokens('get_weather') + countTokens('{"city":"Paris"}'));
  });

  test('a conversation with a call and its result costs the messages plus the call and the call id', () => {
    const request = {
      model: 'gpt-4o',
      messages: [
        { role: 'user' as const, content: 'Weather in Paris?' },
        { role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool' as const, tool_call_id: 'call_1', content: '18C and sunny' },
      ],
    };
    const expected = 3
      + 3 + countTokens('user') + countTokens('Weather in Paris?')
      + 3 + countTokens('assistant') + 6 + countTokens('get_weather') + countTokens('{"city":"Paris"}')
      + 3 + countTokens('tool') + countTokens('call_1') + countTokens('18C and sunny');
    assert.equal(requestPromptTokens(request, countTokens, DEFAULT_PROMPT_TOKEN_RULES), expected);
  });
});
