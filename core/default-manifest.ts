/**
 * The built-in manifest, used when neither `--config` nor `./tollgate.json` is given.
 * `tollgate.example.json` is this same document (a test keeps them equal). Order, and why:
 * - auth-guard first: nothing else runs for an unauthenticated request.
 * - logger next: outermost after auth, so it records every attributable outcome, denials included.
 * - provider-router last: it is terminal.
 */
export const defaultManifest = {
  server: {
    host: '127.0.0.1',
    port: 8787,
  },
  plugins: [
    { name: 'auth-guard', config: {} },
    { name: 'logger', config: {} },
    {
      name: 'provider-router',
      config: {
        providers: {
          openai: {
            type: 'openai',
            baseUrl: '${OPENAI_BASE_URL:-https://api.openai.com/v1}',
            apiKey: '${OPENAI_API_KEY:-}',
          },
        },
      },
    },
  ],
};
