/**
 * The built-in manifest, used when neither `--config` nor `./tollgate.json` is given.
 * `tollgate.example.json` is this same document (a test keeps them equal). Order, and why:
 * - auth-guard first: nothing else runs for an unauthenticated request.
 * - logger next: outermost after auth, so it records every attributable outcome, denials included.
 * - metrics beside it, for the same reason: refusals are counted too.
 * - response-store after them and before rate-limit and budget: a continuation's whole conversation
 *   (expanded from `previous_response_id`) is what their worst case must count.
 * - rate-limit before budget: the cheap in-memory check first.
 * - budget before pricing: on the way back pricing sets the cost before budget settles it.
 * - account after budget and rate-limit, whose state `GET /api/account` shows.
 * - provider-router last: it is terminal. The five built-in providers read their shared keys and base
 *   URLs from the environment (docs/contract.md); one without a key is still usable with users' own keys.
 */
export const defaultManifest = {
  server: {
    host: '127.0.0.1',
    port: 8787,
  },
  plugins: [
    { name: 'auth-guard', config: {} },
    { name: 'logger', config: {} },
    { name: 'metrics', config: {} },
    { name: 'response-store', config: {} },
    { name: 'rate-limit', config: {} },
    { name: 'budget', config: {} },
    { name: 'pricing', config: {} },
    { name: 'account', config: {} },
    {
      name: 'provider-router',
      config: {
        providers: {
          openai: { type: 'openai', baseUrl: '${OPENAI_BASE_URL:-https://api.openai.com/v1}', apiKey: '${OPENAI_API_KEY:-}' },
          anthropic: { type: 'anthropic', baseUrl: '${ANTHROPIC_BASE_URL:-https://api.anthropic.com}', apiKey: '${ANTHROPIC_API_KEY:-}' },
          gemini: { type: 'gemini', baseUrl: '${GEMINI_BASE_URL:-https://generativelanguage.googleapis.com/v1beta}', apiKey: '${GEMINI_API_KEY:-}' },
          mistral: { type: 'mistral', baseUrl: '${MISTRAL_BASE_URL:-https://api.mistral.ai/v1}', apiKey: '${MISTRAL_API_KEY:-}' },
          ollama: { type: 'ollama', baseUrl: '${OLLAMA_BASE_URL:-http://127.0.0.1:11434}', apiKey: '${OLLAMA_API_KEY:-}' },
        },
      },
    },
  ],
};
