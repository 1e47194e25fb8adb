/**
 * Azure OpenAI with the host's managed identity (`entra: { managedIdentity: true }`): the gateway
 * (in this process) runs as if in App Service, `IDENTITY_ENDPOINT` and `IDENTITY_HEADER` naming a
 * local managed-identity endpoint, and `@azure/identity`'s `ManagedIdentityCredential` gets its
 * tokens there; the Azure simulator accepts only tokens that endpoint issued for Azure OpenAI's
 * resource. The OpenAI SDK is the client.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startAzureSimulator, type AzureSimulator } from '../helpers/azure-openai-simulator.ts';
import { IDENTITY_SIM_CLIENTS, IDENTITY_SIM_HEADER, startManagedIdentityEndpoint, type ManagedIdentityEndpoint } from '../helpers/managed-identity-endpoint.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
/** The resource of scope https://cognitiveservices.azure.com/.default, as managed-identity endpoints take it. */
const RESOURCE = 'https://cognitiveservices.azure.com';
const IDENTITY_VARS = ['IDENTITY_ENDPOINT', 'IDENTITY_HEADER'] as const;

let sim: AzureSimulator;
let identity: ManagedIdentityEndpoint;
let tg: TestGateway;
/** Every token the endpoint issued, with the identity it was issued to. */
const issued: Array<{ token: string; clientId: string }> = [];
const saved = Object.fromEntries(IDENTITY_VARS.map((name) => [name, process.env[name]]));

const callsSince = (from: number): RecordedRequest[] => sim.requests.slice(from).filter((r) => r.method === 'POST');

before(async () => {
  sim = await startAzureSimulator();
  identity = await startManagedIdentityEndpoint({
    onIssue(token, resource, clientId) {
      issued.push({ token, clientId });
      if (resource === RESOURCE) sim.tokens.add(token);
    },
  });
  // What App Service sets in the environment of the process it runs.
  Object.assign(process.env, { IDENTITY_ENDPOINT: identity.identityEndpoint, IDENTITY_HEADER: IDENTITY_SIM_HEADER });
  const deployments = { 'chat-prod': { model: 'gpt-4o-mini' } };
  tg = await startTestGateway({
    providers: {
      azure: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: { managedIdentity: true } },
      azureuser: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: { managedIdentity: true, clientId: IDENTITY_SIM_CLIENTS.userAssigned } },
      azurenoidentity: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: { managedIdentity: true, clientId: 'a11ce000-0000-4000-8000-00000000a11c' } },
    },
  });
});

after(async () => {
  await tg?.close();
  await identity?.close();
  await sim?.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('Azure OpenAI with the host\'s managed identity (App Service\'s IDENTITY_ENDPOINT)', () => {
  test('calls carry a Bearer token of the system-assigned identity, asked for Azure OpenAI\'s resource with the identity header, and reused', async () => {
    const from = sim.requests.length;
    const asked = identity.tokenRequests.length;
    const completion = await tg.client.chat.completions.create({ model: 'azure/chat-prod', messages });
    assert.ok(completion.choices[0]!.message.content, 'the resource answered');
    const response = await tg.client.responses.create({ model: 'azure/chat-prod', input: 'Say hello' });
    assert.ok(response.output_text.length > 0);

    const fetched = identity.tokenRequests.slice(asked);
    assert.equal(fetched.length, 1, 'one token for both calls');
    assert.deepEqual(fetched[0], { query: { 'api-version': '2019-08-01', resource: RESOURCE }, identityHeader: IDENTITY_SIM_HEADER });
    const token = issued.at(-1)!;
    assert.equal(token.clientId, IDENTITY_SIM_CLIENTS.system);
    const calls = callsSince(from);
    assert.deepEqual(calls.map((r) => r.path), ['/openai/v1/chat/completions', '/openai/v1/responses']);
    for (const call of calls) {
      assert.equal(call.headers.authorization, `Bearer ${token.token}`);
      assert.equal(call.headers['api-key'], undefined);
    }
  });

  test('with clientId, the token is the user-assigned identity\'s, asked for by its client id', async () => {
    const from = sim.requests.length;
    const asked = identity.tokenRequests.length;
    const completion = await tg.client.chat.completions.create({ model: 'azureuser/chat-prod', messages });
    assert.ok(completion.choices[0]!.message.content);
    assert.deepEqual(identity.tokenRequests.slice(asked).map((r) => r.query.client_id), [IDENTITY_SIM_CLIENTS.userAssigned]);
    const token = issued.at(-1)!;
    assert.equal(token.clientId, IDENTITY_SIM_CLIENTS.userAssigned);
    assert.equal(callsSince(from)[0]!.headers.authorization, `Bearer ${token.token}`);
  });

  test('an identity the host does not have answers 502 naming Entra ID, and nothing reaches the resource', async () => {
    const from = sim.requests.length;
    const err = await tg.client.chat.completions.create({ model: 'azurenoidentity/chat-prod', messages }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.match(err.message, /Provider "azurenoidentity" got no Microsoft Entra ID token/);
    assert.equal(callsSince(from).length, 0);
  });
});
