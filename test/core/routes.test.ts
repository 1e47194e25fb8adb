/** The route table: exact paths, one-segment `{param}`s, and a greedy trailing `{param+}`. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRouteTable, type RouteMethod } from '../../core/routes.ts';

const route = (method: RouteMethod, path: string) => ({ method, path });

describe('createRouteTable', () => {
  const table = createRouteTable([
    route('GET', '/api/v1/models'),
    route('GET', '/api/v1/models/{model+}'),
    route('GET', '/api/v1/responses/{id}'),
    route('DELETE', '/api/v1/responses/{id}'),
    route('GET', '/api/v1/responses/{id}/input_items'),
  ]);

  test('a one-segment parameter takes no slash; a suffix after it is matched', () => {
    assert.deepEqual(table.match('/api/v1/responses/resp_1')?.params, { id: 'resp_1' });
    assert.deepEqual([...table.match('/api/v1/responses/resp_1')!.byMethod.keys()].sort(), ['DELETE', 'GET']);
    assert.deepEqual(table.match('/api/v1/responses/resp_1/input_items')?.params, { id: 'resp_1' });
    assert.equal(table.match('/api/v1/responses/a/b'), null);
  });

  test('a greedy parameter takes slashes, raw or percent-encoded, and is decoded', () => {
    assert.deepEqual(table.match('/api/v1/models/openai/gpt-4o')?.params, { model: 'openai/gpt-4o' });
    assert.deepEqual(table.match('/api/v1/models/openai%2Fgpt-4o')?.params, { model: 'openai/gpt-4o' });
    assert.deepEqual(table.match('/api/v1/models')?.params, {});
    assert.equal(table.match('/api/v1/models/'), null);
    assert.equal(table.match('/api/v1/models/%E0%A4%A'), null, 'a malformed escape matches nothing');
  });

  test('a greedy parameter must end the path, and a path is declared once per method', () => {
    assert.throws(() => createRouteTable([route('GET', '/a/{x+}/b')]), /must end the path/);
    assert.throws(() => createRouteTable([route('GET', '/a/{x}'), route('GET', '/a/{y}')]), /declared twice/);
  });

  test('a parameter followed by a :action suffix matches only paths with that action, before the bare parameter', () => {
    const google = createRouteTable([
      route('GET', '/api/v1beta/models/{model+}'),
      route('POST', '/api/v1beta/models/{model+}:generateContent'),
      route('POST', '/api/v1beta/models/{model+}:countTokens'),
      route('GET', '/api/x/{id}'),
      route('POST', '/api/x/{id}:run'),
    ]);
    const gen = google.match('/api/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(gen?.params, { model: 'gemini-2.5-flash' });
    assert.deepEqual([...gen.byMethod.keys()], ['POST']);
    assert.deepEqual(google.match('/api/v1beta/models/openai/gpt-4o:countTokens')?.params, { model: 'openai/gpt-4o' });
    assert.deepEqual([...google.match('/api/v1beta/models/openai/gpt-4o')!.byMethod.keys()], ['GET']);
    assert.deepEqual(google.match('/api/v1beta/models/m:embedContent')?.params, { model: 'm:embedContent' }, 'an undeclared action is the bare parameter');
    assert.deepEqual([...google.match('/api/v1beta/models/:generateContent')!.byMethod.keys()], ['GET'], 'an empty parameter is not the action');
    assert.deepEqual([...google.match('/api/x/a:run')!.byMethod.keys()], ['POST']);
    assert.deepEqual([...google.match('/api/x/a')!.byMethod.keys()], ['GET']);
  });
});
