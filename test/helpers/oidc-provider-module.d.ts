/**
 * The part of `oidc-provider` (v9, which ships no TypeScript types) that `oidc-provider.ts` uses.
 * Its documentation: https://github.com/panva/node-oidc-provider/blob/main/docs/README.md
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface OidcContext {
    oidc: {
      provider: Provider;
      result?: { consent?: { grantId?: string } };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      client?: { clientId: string };
    };
  }
  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }
  interface Configuration {
    clients?: Array<Record<string, unknown>>;
    findAccount?(ctx: OidcContext, id: string): Promise<Account | undefined>;
    claims?: Record<string, string[]>;
    features?: Record<string, { enabled: boolean }>;
    pkce?: { required(): boolean };
    cookies?: { keys: string[] };
    loadExistingGrant?(ctx: OidcContext): Promise<Grant | undefined>;
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    Grant: { new (init: { clientId: string; accountId: string }): Grant; find(id: string): Promise<Grant | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (ctx: unknown, err: Error) => void): this;
  }
}
