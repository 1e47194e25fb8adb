/**
 * Azure OpenAI with Microsoft Entra ID: the real `tollgate serve` process gets its tokens through
 * `@azure/identity`'s `ClientSecretCredential` from a local Entra token endpoint (over https with a
 * certificate made here, trusted through `NODE_EXTRA_CA_CERTS`: the library refuses an http
 * authority), and the Azure simulator accepts only tokens that endpoint issued. The OpenAI SDK is
 * the client.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startAzureSimulator, AZURE_SIM_KEY, type AzureSimulator } from '../helpers/azure-openai-simulator.ts';
import { startEntraTokenEndpoint, ENTRA_SIM_CLIENT, ENTRA_SIM_TENANT, type EntraTokenEndpoint } from '../helpers/entra-token-endpoint.ts';
import { selfSignedCert } from '../helpers/self-signed-cert.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { defaultManifest } from '../../core/default-manifest.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const SCOPE = 'https://cognitiveservices.azure.com/.default';

let sim: AzureSimulator;
let entra: EntraTokenEndpoint;
/** Issues tokens that live two minutes: inside the five-minute margin, so none is reused. */
let shortLived: EntraTokenEndpoint;
let gateway: GatewayProcess;
let client: OpenAI;
/** Every token the endpoint issued, in order. */
const issued: string[] = [];

const callsSince = (from: number): RecordedRequest[] => sim.requests.slice(from).filter((r) => r.method === 'POST');

before(async () => {
  const tls = selfSignedCert();
  sim = await startAzureSimulator();
  entra = await startEntraTokenEndpoint({
    tls,
    onIssue(token, scope) {
      issued.push(token);
      if (scope.split(' ').includes(SCOPE)) sim.tokens.add(token);
    },
  });
  shortLived = await startEntraTokenEndpoint({ tls, expiresInSec: 120, onIssue: (token) => sim.tokens.add(token) });
  const identity = { tenantId: ENTRA_SIM_TENANT, ...ENTRA_SIM_CLIENT, authorityHost: entra.authorityHost };
  const deployments = { 'chat-prod': { model: 'gpt-4o-mini' } };
  const manifest = structuredClone(defaultManifest) as { plugins: Array<{ name: string; config: Record<string, unknown> }> };
  manifest.plugins.find((p) => p.name === 'provider-router')!.config = {
    providers: {
      azure: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: identity },
      azurekey: { type: 'azure', baseUrl: sim.endpoint, apiKey: AZURE_SIM_KEY, deployments, entra: identity },
      azureshort: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: { ...identity, authorityHost: shortLived.authorityHost } },
      azurebadsecret: { type: 'azure', baseUrl: sim.endpoint, deployments, entra: { ...identity, clientSecret: 'not-the-secret' } },
    },
  };
  const dataDir = tempDir();
  await cliJson(['users', 'create', '--name', 'entra'], { dataDir });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', 'entra'], { dataDir });
  gateway = await startGatewayProcess({ dataDir, manifest, env: { NODE_EXTRA_CA_CERTS: tls.certFile } });
  client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
});

after(async () => {
  await gateway?.stop();
  await entra?.close();
  await shortLived?.close();
  await sim?.close();
});

describe('Azure OpenAI with a Microsoft Entra ID token', () => {
  test('chat, a stream and Responses carry a Bearer token from the token endpoint, fetched once and reused', async () => {
    const from = sim.requests.length;
    const tokenRequests = entra.tokenRequests.length;
    const completion = await client.chat.completions.create({ model: 'azure/chat-prod', messages });
    assert.ok(completion.choices[0]!.message.content, 'the resource answered');
    const stream = await client.chat.completions.create({ model: 'azure/chat-prod', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.ok(text.length > 0);
    const response = await client.responses.create({ model: 'azure/chat-prod', input: 'Say hello' });
    assert.ok(response.output_text.length > 0);

    const calls = callsSince(from);
    assert.deepEqual(calls.map((r) => r.path), ['/openai/v1/chat/completions', '/openai/v1/chat/completions', '/openai/v1/responses']);
    const fetched = entra.tokenRequests.slice(tokenRequests);
    assert.equal(fetched.length, 1, 'one token for all three calls');
    assert.deepEqual(
      [fetched[0]!.tenant, fetched[0]!.form.grant_type, fetched[0]!.form.client_id, (fetched[0]!.form.scope ?? '').split(' ').includes(SCOPE)],
      [ENTRA_SIM_TENANT, 'client_credentials', ENTRA_SIM_CLIENT.clientId, true],
    );
    const token = issued.at(-1)!;
    for (const call of calls) {
      assert.equal(call.headers.authorization, `Bearer ${token}`);
      assert.equal(call.headers['api-key'], undefined);
    }
  });

  test('a token within five minutes of its expiry is not reused: the next call fetches a new one', async () => {
    const from = sim.requests.length;
    await client.chat.completions.create({ model: 'azureshort/chat-prod', messages });
    await client.chat.completions.create({ model: 'azureshort/chat-prod', messages });
    assert.equal(shortLived.tokenRequests.length, 2);
    const [first, second] = callsSince(from).map((r) => r.headers.authorization);
    assert.ok(first && second && first !== second, `two different tokens: ${first} ${second}`);
  });

  test('a provider with an api-key sends it, not a token', async () => {
    const from = sim.requests.length;
    const tokenRequests = entra.tokenRequests.length;
    await client.chat.completions.create({ model: 'azurekey/chat-prod', messages });
    const [call] = callsSince(from);
    assert.equal(call!.headers['api-key'], AZURE_SIM_KEY);
    assert.equal(call!.headers.authorization, undefined);
    assert.equal(entra.tokenRequests.length, tokenRequests, 'no token was asked for');
  });

  test('a refused client secret answers 502 naming Entra ID, and nothing reaches the resource', async () => {
    const from = sim.requests.length;
    const tokenRequests = entra.tokenRequests.length;
    const err = await client.chat.completions.create({ model: 'azurebadsecret/chat-prod', messages }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.match(err.message, /Provider "azurebadsecret" got no Microsoft Entra ID token \(.*AADSTS7000215/s);
    assert.ok(entra.tokenRequests.length > tokenRequests, 'the token endpoint was asked');
    assert.equal(callsSince(from).length, 0);
  });
});
