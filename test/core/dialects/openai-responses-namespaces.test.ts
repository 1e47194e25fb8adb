/** Namespaced function tools on a translated Responses route (core/dialects/openai-responses/namespaces.ts). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openAIResponses } from '../../../core/dialects/openai-responses/index.ts';
import { chatRequestOf } from '../../../core/canonical/canonical-request.ts';
import { declaredNamespaces, splitName } from '../../../core/dialects/openai-responses/namespaces.ts';

const tools = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object' } },
  { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents', tools: [{ type: 'function', name: 'spawn_agent', description: 'Start one', parameters: { type: 'object' } }] },
];

describe('namespaced tools through translation', () => {
  test('a namespace\'s functions become chat functions named <namespace>__<name>', () => {
    const parsed = openAIResponses.parseRequest({ model: 'anthropic/x', input: 'hi', tools }, 'responses.create');
    assert.equal(parsed.untranslatable, null);
    assert.deepEqual(chatRequestOf(parsed.canonical)!.tools, [
      { type: 'function', function: { name: 'exec_command', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'multi_agent_v1__spawn_agent', description: 'Start one', parameters: { type: 'object' } } },
    ]);
  });

  test('a replayed call of a namespaced tool keeps its flattened name, and a call is split back', () => {
    const parsed = openAIResponses.parseRequest({
      model: 'anthropic/x', tools,
      input: [{ type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }],
    }, 'responses.create');
    assert.equal(chatRequestOf(parsed.canonical)!.messages[0]!.tool_calls![0]!.function.name, 'multi_agent_v1__spawn_agent');
    const namespaces = declaredNamespaces(parsed.body);
    assert.deepEqual(namespaces, ['multi_agent_v1']);
    assert.deepEqual(splitName('multi_agent_v1__spawn_agent', namespaces), { name: 'spawn_agent', namespace: 'multi_agent_v1' });
    assert.deepEqual(splitName('exec_command', namespaces), { name: 'exec_command' });
    assert.deepEqual(splitName('multi_agent_v1__', namespaces), { name: 'multi_agent_v1__' });
  });

  test('a built-in tool inside a namespace is still refused by its path', () => {
    const parsed = openAIResponses.parseRequest({ model: 'anthropic/x', input: 'hi', tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }] }, 'responses.create');
    assert.equal(parsed.untranslatable?.param, 'tools[0].tools[0]');
  });
});
