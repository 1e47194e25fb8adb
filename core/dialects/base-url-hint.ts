/**
 * The likely base-URL mistake behind a path under `/api` that no endpoint has, guessed from what the
 * path ends in: every SDK appends its own API's path to the base URL it is given, so the tail says which
 * dialect the client speaks and the head says what was wrong with its base URL (`/api/v1/v1/messages`:
 * an Anthropic client given `<gateway>/api/v1`). The 404 then speaks that dialect's error shape, which
 * the client can show, and names the variable to fix.
 *
 * Sources: the paths each client appends (docs/agents.md): Claude Code and the Anthropic SDKs
 * `/v1/messages`, `@ai-sdk/anthropic` and opencode `/messages`, the OpenAI SDKs `/chat/completions`,
 * `/responses`, `/embeddings`, `/models`, Gemini CLI and `@google/genai` `/v1beta/models/{model}:<method>`.
 */
import type { Dialect } from './dialect.ts';
import { anthropicMessages } from './anthropic-messages/index.ts';
import { gemini } from './gemini/index.ts';
import { openAIChat } from './openai-chat/index.ts';

/** A guessed dialect and the sentence that tells its client which base URL to use. */
export interface BaseUrlGuess {
  /** The dialect whose error shape the 404 takes. */
  dialect: Dialect;
  /** One or two sentences naming the environment variable and the base URL the client wants. */
  hint: string;
}

/** Google's custom methods (`models/{model}:generateContent`, https://google.aip.dev/136) and its version segment. */
const GEMINI_PATH = /(?:\/v1beta\/|:(?:generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$)/;
const ANTHROPIC_PATH = /\/messages(?:\/count_tokens)?$/;
const OPENAI_PATH = /\/(?:chat\/completions|completions|embeddings|models|responses(?:\/[^/]+)*)$/;

const GUESSES: readonly { pattern: RegExp; guess: BaseUrlGuess }[] = [
  {
    pattern: GEMINI_PATH,
    guess: {
      dialect: gemini,
      hint: 'This looks like a Gemini client with a wrong base URL: Gemini CLI and @google/genai append /v1beta/models/{model}:<method> themselves, so set GOOGLE_GEMINI_BASE_URL (or the SDK\'s baseUrl) to <gateway>/api, where <gateway> is this server\'s address.',
    },
  },
  {
    pattern: ANTHROPIC_PATH,
    guess: {
      dialect: anthropicMessages,
      hint: 'This looks like an Anthropic client with a wrong base URL: Claude Code and the Anthropic SDKs append /v1/messages, @ai-sdk/anthropic and opencode /messages, so set ANTHROPIC_BASE_URL (or the SDK\'s baseURL) to <gateway>/api, without /v1, where <gateway> is this server\'s address.',
    },
  },
  {
    pattern: OPENAI_PATH,
    guess: {
      dialect: openAIChat,
      hint: 'This looks like an OpenAI client with a wrong base URL: the OpenAI SDKs and Codex append /chat/completions (or /responses, /embeddings, /models) themselves, so set OPENAI_BASE_URL (or the SDK\'s baseURL) to <gateway>/api/v1, where <gateway> is this server\'s address.',
    },
  },
];

/**
 * The dialect a path under `/api` looks like and the base-URL hint for its clients, or null when the
 * path looks like none (the 404 then keeps the OpenAI shape and a hint for every kind of client).
 * Gemini is tried first: its paths may end in `/models/...` too.
 */
export function guessBaseUrlMistake(path: string): BaseUrlGuess | null {
  for (const { pattern, guess } of GUESSES) if (pattern.test(path)) return guess;
  return null;
}
