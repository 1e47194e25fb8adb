/**
 * The manifest's top-level JSON Schema (`core/manifest.ts` validates a manifest with it, then each
 * plugin's config with the plugin's own `configSchema`): the `server`, `upstream`, `store`, `admin`,
 * `coordination`, `tracing`, `reconciliation` and `log` sections with their defaults, and the plugin list. Every field a manifest
 * may set is documented here and in docs/configuration.md.
 */
import type { JsonSchema } from './json-schema.ts';

export const manifestSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['plugins'],
  properties: {
    $schema: { type: 'string' },
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1', description: 'Interface to listen on.' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8787, description: 'TCP port; 0 picks a free one.' },
        maxBodyBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024, description: 'Largest request body accepted (413 above it).' },
        maxBodyBytesByDialect: {
          type: 'object',
          default: { 'anthropic-messages': 32 * 1024 * 1024 },
          description: 'Largest body per dialect id, where it differs from maxBodyBytes. Agents send whole sessions: Anthropic Messages (Claude Code) defaults to 32 MiB, Anthropic\'s own limit.',
          additionalProperties: { type: 'integer', minimum: 1024, description: 'Bytes.' },
        },
        maxBodyBytesInFlight: {
          type: 'integer', minimum: 1024, default: 256 * 1024 * 1024,
          description: 'Bytes of request bodies being read and parsed at once, all clients together (a body holds its content-length from before it is read until it is parsed). A body that does not fit is answered 503 bodies_in_flight_full with Retry-After: 1 at once, rather than queued: a queue would hold sockets and memory the cap exists to bound. Keep it at least the largest maxBodyBytesByDialect.',
        },
        maxBodyBytesInFlightPerUser: {
          type: 'integer', minimum: 1024,
          description: 'Bytes of request bodies being read and parsed at once for one gateway user (before authentication: one client address), their share of maxBodyBytesInFlight, so one caller declaring big bodies and sending them slowly (or never) cannot refuse everyone else\'s. A body past it is answered 503 bodies_in_flight_full for that caller only. Default a quarter of maxBodyBytesInFlight, at least the largest body limit (maxBodyBytes, maxBodyBytesByDialect) and at most maxBodyBytesInFlight.',
        },
        drainTimeoutMs: { type: 'integer', minimum: 0, default: 10_000, description: 'On SIGTERM, how long in-flight requests may take to finish before they are cut.' },
        headersTimeoutMs: { type: 'integer', minimum: 100, default: 20_000, description: 'Time a client has to send its request headers; then 408 and the connection is closed (slow-header clients cannot hold sockets).' },
        requestTimeoutMs: { type: 'integer', minimum: 100, default: 300_000, description: 'Time a client has to send its whole request, body included (408 after). Does not limit the answer. At least headersTimeoutMs.' },
        keepAliveTimeoutMs: { type: 'integer', minimum: 100, default: 65_000, description: 'How long an idle keep-alive client connection is kept open (above the 60 s of common load balancers).' },
        maxConnections: { type: 'integer', minimum: 1, default: 4096, description: 'Open client connections at most. At the cap a new connection closes the oldest idle one (serving no request), or is closed at once when none is idle. Keep it below the process\'s file-descriptor limit (logged at start).' },
        maxConnectionsPerAddress: { type: 'integer', minimum: 1, default: 256, description: 'Open client connections per remote address at most (loopback included). At the cap a new connection closes the address\'s oldest idle one, or is closed at once when none is idle.' },
        maxIdleConnectionsPerAddress: { type: 'integer', minimum: 1, default: 64, description: 'Idle client connections per remote address at most: connections serving no request (headers not yet complete, or kept alive between requests). A new connection beyond it closes the address\'s oldest idle one, so stalled clients cannot lock an address or the gateway out.' },
        logLevel: { enum: ['debug', 'info', 'warn', 'error'], default: 'info', description: 'Server log verbosity.' },
        cors: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'CORS for browser apps calling /api/* from other origins (never /admin). Off until allowedOrigins lists an origin.',
          properties: {
            allowedOrigins: {
              type: 'array', default: [], uniqueItems: true,
              items: { type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$' },
              description: 'Origins allowed to call the API, exactly as browsers send them ("https://app.example", "http://localhost:5173"), or "*" for any.',
            },
            allowCredentials: { type: 'boolean', default: false, description: 'Answer Access-Control-Allow-Credentials: true to the listed origins (only for apps that send cookies; API keys need no credentials mode). Not with "*".' },
            maxAgeSeconds: { type: 'integer', minimum: 0, maximum: 86_400, default: 600, description: 'How long browsers may cache a preflight answer.' },
          },
        },
      },
    },
    admin: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Serve the admin web UI at /admin/ and its JSON API at /admin/api.' },
        sessionIdleMinutes: { type: 'integer', minimum: 1, default: 120, description: 'An admin session ends after this long without a request.' },
        sessionMaxHours: { type: 'integer', minimum: 1, default: 12, description: 'An admin session ends this long after login, active or not.' },
        loginMaxFailures: { type: 'integer', minimum: 1, default: 5, description: 'Failed logins allowed per username within the window (4x that per client address) before 429.' },
        loginWindowMinutes: { type: 'integer', minimum: 1, default: 15, description: 'The window failed logins are counted in.' },
        oidc: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'clientId'],
          description: 'Single sign-on for the admin UI with OpenID Connect (authorization code + PKCE; README "Single sign-on"). Absent: password sign-in only.',
          properties: {
            issuer: { type: 'string', pattern: '^https?://', description: 'The provider\'s issuer URL (its discovery document is at <issuer>/.well-known/openid-configuration). https, or http only on a loopback host.' },
            name: { type: 'string', minLength: 1, maxLength: 60, description: 'Shown on the sign-in button ("Sign in with <name>"); default the issuer\'s host.' },
            clientId: { type: 'string', minLength: 1, description: 'The client id registered at the provider.' },
            clientSecretEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Name of the environment variable holding the client secret (never the secret itself). Absent: a public client (PKCE only).' },
            redirectUrl: { type: 'string', pattern: '^https?://', description: 'The callback URL registered at the provider; default the request\'s own origin + /admin/api/oidc/callback.' },
            scopes: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, default: ['openid', 'email', 'profile'], description: 'Scopes asked for; must include openid.' },
            allowedDomains: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Email domains that may sign in (the email must be verified). Absent: any domain.' },
            allowedGroups: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Values of roleClaim of which the identity must hold one. Absent: no group needed. With allowedDomains, both must pass.' },
            roleClaim: { type: 'string', minLength: 1, default: 'groups', description: 'The claim (ID token or userinfo) whose values map to roles: a string or an array of strings.' },
            roleMapping: {
              type: 'object',
              additionalProperties: false,
              default: {},
              description: 'Claim values per role; the highest matching role wins (admin, then team-admin, then viewer). No match: sign-in refused.',
              properties: {
                admin: { type: 'array', items: { type: 'string' }, default: [], description: 'Values that make an admin (everything).' },
                viewer: { type: 'array', items: { type: 'string' }, default: [], description: 'Values that make a viewer (read-only).' },
                teamAdmin: { type: 'array', items: { type: 'string' }, default: [], description: 'Values that make a team-admin; their teams come from the values starting with teamAdminPrefix.' },
              },
            },
            teamAdminPrefix: { type: 'string', minLength: 1, default: 'tollgate-team-admin:', description: 'A claim value "<prefix><team>" makes a team-admin of team <team>.' },
            passwordLogin: { type: 'boolean', default: true, description: 'Keep the local password sign-in (POST /admin/api/login). false: it answers 403 password_login_disabled.' },
          },
        },
      },
    },
    portal: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The self-service portal for gateway users at /portal/ (docs/portal.md): their budget, requests, keys, models and snippets.',
      properties: {
        enabled: { type: 'boolean', default: false, description: 'Serve the portal at /portal/ and its JSON API at /portal/api. Off by default.' },
        createUsers: { type: 'boolean', default: false, description: 'Create a gateway user at sign-in when no user has the signed-in email; otherwise such a sign-in is refused.' },
        sessionIdleMinutes: { type: 'integer', minimum: 1, default: 120, description: 'A portal session ends after this long without a request.' },
        sessionMaxHours: { type: 'integer', minimum: 1, default: 12, description: 'A portal session ends this long after sign-in, active or not.' },
      },
    },
    upstream: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        connectTimeoutMs: { type: 'integer', minimum: 0, default: 10_000, description: 'TCP/TLS connect timeout (504 upstream_timeout).' },
        headersTimeoutMs: { type: 'integer', minimum: 0, default: 120_000, description: 'Time to the upstream response headers (504).' },
        bodyTimeoutMs: { type: 'integer', minimum: 0, default: 120_000, description: 'Longest silence between two body chunks (504 before headers, error event after).' },
        maxResponseBytes: { type: 'integer', minimum: 1024, default: 16 * 1024 * 1024, description: 'Largest non-streamed upstream body read (it is held whole in memory); beyond it 502 upstream_response_too_large.' },
        maxStreamBytes: { type: 'integer', minimum: 1024, default: 64 * 1024 * 1024, description: 'Most bytes relayed from one upstream stream; beyond it the stream ends with the dialect\'s error event (upstream_response_too_large), billed for what was sent.' },
        connectionsPerOrigin: { type: 'integer', minimum: 1, default: 256, description: 'Keep-alive pool size per upstream origin.' },
        queueTimeoutMs: { type: 'integer', minimum: 0, default: 30_000, description: 'Longest a call waits for a connection when its origin\'s pool (connectionsPerOrigin) is full; then 503 upstream_busy. 0 = no limit.' },
        requestDeadlineMs: { type: 'integer', minimum: 0, default: 300_000, description: 'Longest a non-streamed upstream call may take in all, headers and body (504 upstream_timeout); 0 = none. Reasoning models can take minutes.' },
      },
    },
    store: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The database. Without url it is the SQLite file tollgate.db in the data directory (one replica).',
      properties: {
        url: {
          type: ['string', 'null'], default: null, pattern: '^$|^postgres(ql)?://',
          description: 'PostgreSQL URL (postgres://user:password@host:5432/db; PostgreSQL 15+) for several replicas; null or "" = SQLite in the data directory, unless TOLLGATE_DATABASE_URL is set.',
        },
        maxConnections: { type: 'integer', minimum: 1, default: 10, description: 'PostgreSQL connections per replica at most.' },
      },
    },
    coordination: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'State several replicas share. Without redis everything is kept in this process (one replica).',
      properties: {
        redis: {
          type: ['string', 'null'], default: null, pattern: '^$|^rediss?://',
          description: 'Redis URL (redis://[user:password@]host:port[/db], rediss:// for TLS) where every replica counts rate limits (rpm, tpm, concurrency) and budgets (spend and reservations); null or "" = none, then TOLLGATE_REDIS_URL if set.',
        },
        failMode: {
          enum: ['closed', 'open'], default: 'closed',
          description: 'While Redis is unreachable: "closed" answers requests under an rpm/tpm limit or a budget 503 coordination_unavailable; "open" lets them through (rate limits uncounted, budgets counted per replica) and logs a warning. Either way concurrency limits are counted by each replica alone meanwhile and never refuse for Redis.',
        },
        failModeByLimit: {
          type: 'object', additionalProperties: false, default: {},
          description: 'failMode for one kind of limit, over failMode: e.g. {"rateLimits": "open"} keeps serving uncounted rpm/tpm while Redis is down, budgets still closed.',
          properties: { rateLimits: { enum: ['closed', 'open'] }, budgets: { enum: ['closed', 'open'] } },
        },
        leaseTtlMs: {
          type: 'integer', minimum: 1_000, default: 30_000,
          description: 'How long a request\'s concurrency slot lives in Redis without renewal (a live replica renews it every third of this): the most a replica that dies mid-request keeps slots taken.',
        },
        commandTimeoutMs: {
          type: 'integer', minimum: 50, default: 500,
          description: 'How long a replica waits for one Redis call before it counts as unreachable (then failMode applies), ms. Raise it where replicas run on busy machines.',
        },
        budgetReservationTtlMs: {
          type: 'integer', minimum: 1_000, default: 600_000,
          description: 'How long a request\'s budget reservation lives in Redis (not renewed): the most a replica that dies mid-request keeps budget reserved. Keep it above the longest request (upstream.requestDeadlineMs, long streams): a reservation that expires first no longer holds its share, though the cost is still billed.',
        },
      },
    },
    tracing: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'OpenTelemetry traces over OTLP/HTTP: one span per request (GenAI semantic conventions) and one child span per upstream attempt. Off unless otlpEndpoint is set, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT in the environment; what is set here wins over the environment.',
      properties: {
        enabled: { type: 'boolean', description: 'false turns tracing off even when the OTEL_* environment names an endpoint; absent: on when an endpoint is known.' },
        otlpEndpoint: {
          type: 'string', pattern: '^https?://',
          description: 'The OTLP/HTTP traces URL, path included (http://collector:4318/v1/traces). Absent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces.',
        },
        headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Headers sent with every export, e.g. a hosted backend\'s API key ("${HONEYCOMB_KEY}").' },
        serviceName: { type: 'string', minLength: 1, description: 'The service.name of the spans; absent: OTEL_SERVICE_NAME, else "tollgate".' },
        sampleRatio: { type: 'number', minimum: 0, maximum: 1, default: 1, description: 'Share of new traces kept; a request that continues a client\'s trace follows its sampled flag.' },
        capturePrompts: { type: 'boolean', default: false, description: 'Put the request\'s messages and the answer\'s text on the request span (gen_ai.input.messages, gen_ai.output.messages). Off: no prompt or answer text is ever in a span.' },
        exportDelayMs: { type: 'integer', minimum: 1, maximum: 600_000, default: 5_000, description: 'Longest a finished span waits before it is sent, in a batch with others (the OTel SDK\'s batch delay), ms. Spans queued past 2048 are dropped, never the requests.' },
        captureMaxChars: { type: 'integer', minimum: 64, default: 8192, description: 'With capturePrompts, most characters of text kept per attribute; the rest is cut and marked [truncated].' },
      },
    },
    reconciliation: {
      type: 'object',
      additionalProperties: false,
      default: {},
      dependencies: { webhookUrl: ['secret'] },
      description: "Reconciliation of the ledger with the providers' own usage and cost reports (docs/reconciliation.md): `tollgate reconcile`, and a daily run in `tollgate serve` (one replica at a time) once an admin credential is stored (`tollgate credentials set-admin`).",
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Run the daily reconciliation in `tollgate serve`. It runs only while an admin credential is stored.' },
        timeOfDay: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', default: '04:00', description: 'When the daily run starts, HH:MM in UTC (providers finish a day\'s report some hours after midnight UTC).' },
        lookbackDays: { type: 'integer', minimum: 1, maximum: 31, default: 3, description: 'Days the daily run compares: the last N whole UTC days, yesterday included (late usage changes a report for a day or two).' },
        tolerancePercent: { type: 'number', minimum: 0, maximum: 100, default: 1, description: 'A day x provider x model row is flagged when its cost differs by more than this percent of the larger side AND more than toleranceUsd.' },
        toleranceUsd: { type: 'number', minimum: 0, default: 0.5, description: 'USD a row may differ by per day before it is flagged (the larger of the two tolerances applies).' },
        webhookUrl: { type: 'string', pattern: '^https?://', description: 'Where a flagged run is announced: a JSON POST signed like budget alerts (x-tollgate-signature). Requires secret.' },
        secret: { type: 'string', minLength: 16, description: 'Key of the HMAC-SHA256 in the x-tollgate-signature header (e.g. "${TOLLGATE_ALERT_SECRET}"). At least 16 characters.' },
        timeoutMs: { type: 'integer', minimum: 1000, default: 30_000, description: 'Bound on each report call and each webhook attempt, ms.' },
      },
    },
    plugins: {
      type: 'array',
      minItems: 1,
      description: 'Plugins in the order their request hooks run (responses run in reverse).',
      items: {
        type: 'object',
        additionalProperties: false,
        anyOf: [{ required: ['name'] }, { required: ['module'] }],
        properties: {
          name: { type: 'string', description: "A built-in plugin's name; for a plugin loaded by `module`, optional (its own name, when written, must match)." },
          module: {
            type: 'string', minLength: 1,
            description: 'A plugin written on the plugin SDK (docs/plugins.md): a file relative to this manifest\'s folder ("./my-plugin.mjs") or a package resolved from there ("@acme/tollgate-plugin-x"); its default export is definePlugin(...).',
          },
          hookTimeoutMs: {
            type: 'integer', minimum: 1, maximum: 600_000,
            description: 'For a plugin written on the plugin SDK: how long one of its hooks may take before the request fails with 500 plugin_error (default 5000), ms.',
          },
          config: { type: 'object', default: {}, description: "The plugin's config, validated by its own schema." },
        },
      },
    },
  },
};
