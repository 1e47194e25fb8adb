/**
 * The portal's "connect your tools" snippets (docs/portal.md "Snippets"): the base URLs and ready-to-
 * paste configuration for Claude Code, Codex CLI and the OpenAI and Anthropic SDKs, following
 * docs/agents.md (each client appends its own API's path, so the base URL depends on the dialect it
 * speaks: Anthropic Messages at `<gateway>/api`, OpenAI's at `<gateway>/api/v1`). The key is left as
 * `tg_...`: the portal shows a key once, at creation, and never again.
 */

export interface AgentSnippet {
  id: 'claude-code' | 'codex' | 'openai-sdk' | 'anthropic-sdk';
  title: string;
  /** What the text is: `sh`, `toml`, `ts`. */
  language: string;
  text: string;
}

export interface AgentSnippets {
  base_urls: { openai: string; anthropic: string };
  /** The model the examples name: the first the user may call, else a placeholder. */
  example_model: string;
  snippets: AgentSnippet[];
}

/** The snippets for a gateway reached at `origin` (`https://llm.example.com`) by a user who may call `models`. */
export function agentSnippets(origin: string, models: readonly string[]): AgentSnippets {
  const anthropic = `${origin}/api`;
  const openai = `${origin}/api/v1`;
  const model = models[0] ?? 'provider/model';
  return {
    base_urls: { openai, anthropic },
    example_model: model,
    snippets: [
      {
        id: 'claude-code', title: 'Claude Code', language: 'sh',
        text: `export ANTHROPIC_BASE_URL=${anthropic}\nexport ANTHROPIC_API_KEY=tg_...   # your portal key\nclaude`,
      },
      {
        id: 'codex', title: 'Codex CLI (~/.codex/config.toml)', language: 'toml',
        text: [
          'model_provider = "tollgate"',
          `model = "${model}"`,
          '',
          '[model_providers.tollgate]',
          'name = "Tollgate"',
          `base_url = "${openai}"`,
          'wire_api = "responses"',
          'env_key = "TOLLGATE_API_KEY"     # export TOLLGATE_API_KEY=tg_...',
          'http_headers = { "x-tollgate-optional-tools" = "web_search" }',
        ].join('\n'),
      },
      {
        id: 'openai-sdk', title: 'OpenAI SDK', language: 'ts',
        text: [
          "import OpenAI from 'openai';",
          `const client = new OpenAI({ baseURL: '${openai}', apiKey: process.env.TOLLGATE_API_KEY });`,
          `const completion = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });`,
        ].join('\n'),
      },
      {
        id: 'anthropic-sdk', title: 'Anthropic SDK', language: 'ts',
        text: [
          "import Anthropic from '@anthropic-ai/sdk';",
          `const client = new Anthropic({ baseURL: '${anthropic}', apiKey: process.env.TOLLGATE_API_KEY });`,
          `const message = await client.messages.create({ model: '${model}', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }] });`,
        ].join('\n'),
      },
    ],
  };
}
