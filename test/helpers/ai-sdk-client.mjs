// A Vercel AI SDK client, run by test/e2e/ai-sdk.test.ts with the Node 24 binary (AI SDK 7 needs
// Node 22+) and the packages installed by bin/install-test-tools.js. `provider` picks the AI SDK
// provider: `openai` (the default: `createOpenAI(...)(model)` speaks the Responses API,
// `.embedding(model)` embeddings; baseURL `<gateway>/api/v1`), `anthropic` (`@ai-sdk/anthropic`, which
// appends `/messages`; baseURL `<gateway>/api`) or `google` (`@ai-sdk/google`, which appends
// `/models/{model}:generateContent`; baseURL `<gateway>/api/v1beta`).
//
//   node ai-sdk-client.mjs '{"sdkDir", "baseURL", "apiKey", "provider"?, "model", "op": "generate"|"stream"|"tools"|"embed", "prompt"}'
//
// Prints one JSON line: what the call returned (text, usage, finish reason, tool calls, vector size),
// or {"error": {"name", "message", "statusCode"}}.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = JSON.parse(process.argv[2]);
const require = createRequire(join(args.sdkDir, 'package.json'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { generateText, streamText, embed, tool, stepCountIs, jsonSchema } = await load('ai');

/** The provider instance `args.provider` names: a function from a model id to a language model. */
async function providerOf(name) {
  switch (name ?? 'openai') {
    case 'openai': return (await load('@ai-sdk/openai')).createOpenAI({ baseURL: args.baseURL, apiKey: args.apiKey });
    case 'anthropic': return (await load('@ai-sdk/anthropic')).createAnthropic({ baseURL: args.baseURL, apiKey: args.apiKey });
    case 'google': return (await load('@ai-sdk/google')).createGoogleGenerativeAI({ baseURL: args.baseURL, apiKey: args.apiKey });
    default: throw new Error(`unknown provider ${name}`);
  }
}
const provider = await providerOf(args.provider);

const weather = tool({
  description: 'The current weather in a city.',
  inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
  execute: async ({ city }) => ({ city, forecast: 'sunny, 21 °C' }),
});

async function run() {
  switch (args.op) {
    case 'generate': {
      const r = await generateText({ model: provider(args.model), prompt: args.prompt, maxRetries: 0 });
      return { text: r.text, usage: r.usage, finishReason: r.finishReason, responseId: r.response.id };
    }
    case 'stream': {
      const r = streamText({ model: provider(args.model), prompt: args.prompt, maxRetries: 0, onError: () => {} });
      const deltas = [];
      for await (const delta of r.textStream) deltas.push(delta);
      return { deltas, text: await r.text, usage: await r.usage, finishReason: await r.finishReason };
    }
    case 'tools': {
      const r = await generateText({ model: provider(args.model), prompt: args.prompt, tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
      return {
        text: r.text,
        steps: r.steps.length,
        toolCalls: r.steps.flatMap((s) => s.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input }))),
        toolResults: r.steps.flatMap((s) => s.toolResults.map((t) => t.output)),
        usage: r.totalUsage,
      };
    }
    case 'embed': {
      const r = await embed({ model: provider.embedding(args.model), value: args.prompt, maxRetries: 0 });
      return { dimensions: r.embedding.length, head: r.embedding.slice(0, 4), usage: r.usage };
    }
    default:
      throw new Error(`unknown op ${args.op}`);
  }
}

try {
  console.log(JSON.stringify(await run()));
} catch (err) {
  console.log(JSON.stringify({ error: { name: err?.name, message: String(err?.message ?? err), statusCode: err?.statusCode ?? null } }));
}
