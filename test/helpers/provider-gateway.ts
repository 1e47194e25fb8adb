/**
 * The in-process gateway of a cloud provider's test (Bedrock, Vertex AI): the given provider entries
 * behind the default chain, the router retrying once per deployment without backoff (so a simulated
 * 429 is retried at once), and both official clients pointed at it: `openai` (`/api/v1`) and
 * `@anthropic-ai/sdk` (`/api/v1/messages`, Claude Code's path), neither retrying on its own.
 */
import type OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './test-gateway.ts';

export interface ProviderGateway {
  readonly tg: TestGateway;
  readonly client: OpenAI;
  readonly anthropic: Anthropic;
}

/** The router's retry of these tests: two attempts, one per deployment, no backoff, a retry-after up to 1 s honoured. */
const RETRY = { maxAttempts: 2, retriesPerDeployment: 1, backoffMs: 0, maxRetryAfterMs: 1_000 };

/** Starts the gateway with `providers` (provider-router's entries by id); close it with `tg.close()`. */
export async function startProviderGateway(providers: TestGatewayOptions['providers']): Promise<ProviderGateway> {
  const tg = await startTestGateway({ providers, router: { retry: RETRY } });
  const anthropic = new Anthropic({ apiKey: tg.apiKey, baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
  return { tg, client: tg.client, anthropic };
}

/** Every item of a stream, in order. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** What `fn` rejected with; fails the test when it resolves. */
export async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  const err = await fn().then(() => null, (e: unknown) => e);
  if (!err) throw new Error('expected an error');
  return err;
}
