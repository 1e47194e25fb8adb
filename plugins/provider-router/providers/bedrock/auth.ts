/**
 * AWS credentials and SigV4 signing of Bedrock calls. A credential is either static keys (the
 * manifest's `accessKeyId` / `secretAccessKey` / `sessionToken`, a pool entry or a user's own
 * credential, written `accessKeyId:secretAccessKey[:sessionToken]`: AWS keys and session tokens
 * hold no `:`) or, when empty, the standard AWS chain (`fromNodeProviderChain`: environment, shared
 * profile files, web identity, container and instance roles), which caches what it resolved and
 * fetches again before an expiry.
 *
 * Every call is signed at dispatch (`UpstreamRequest.authorize`): service `bedrock`, the provider's
 * region, the method, path, query, signed headers and body hash, the time. What the signer adds
 * (`authorization`, `x-amz-date`, `x-amz-security-token`, `x-amz-content-sha256`) goes with the call;
 * `host` is signed as the origin's `host[:port]`, which is what undici sends.
 *
 * Sources: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html ;
 * https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/setting-credentials-node.html
 * (the chain's order); `@smithy/signature-v4` (the signer the AWS SDK itself uses).
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { upstreamError } from '../../../../core/errors.ts';
import type { UpstreamRequest } from '../../../../core/upstream/upstream-call.ts';

/** AWS's signing name of both Bedrock endpoints (runtime and control plane). */
export const BEDROCK_SIGNING_SERVICE = 'bedrock';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

type CredentialSource = AwsCredentials | (() => Promise<AwsCredentials>);
type SourceData = string | ArrayBuffer | ArrayBufferView;

/** SHA-256 (HMAC when given a secret) from node:crypto, in the shape `@smithy/signature-v4` asks for. */
export class Sha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }

  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** `accessKeyId:secretAccessKey[:sessionToken]` → the keys; null for an empty string (the chain) or a malformed one. */
export function parseAwsKey(key: string): AwsCredentials | null {
  const parts = key.split(':');
  if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1]) return null;
  return parts[2] ? { accessKeyId: parts[0], secretAccessKey: parts[1], sessionToken: parts[2] } : { accessKeyId: parts[0], secretAccessKey: parts[1] };
}

/** The credential string of static keys (see the module doc); '' when either part is missing. */
export function awsKeyOf(accessKeyId: string | undefined, secretAccessKey: string | undefined, sessionToken?: string): string {
  if (!accessKeyId || !secretAccessKey) return '';
  return sessionToken ? `${accessKeyId}:${secretAccessKey}:${sessionToken}` : `${accessKeyId}:${secretAccessKey}`;
}

/** Signs requests of one provider (one region), per credential. Signers are kept per credential, a few. */
/**
 * The standard AWS chain (`fromNodeProviderChain`), its library imported at the first credential
 * asked rather than at start-up: loading it costs every gateway and CLI process ~0.1 s of CPU, and
 * most never call Bedrock. The chain itself caches what it resolved.
 */
function nodeProviderChain(): () => Promise<AwsCredentials> {
  let chain: Promise<() => Promise<AwsCredentials>> | null = null;
  return async () => {
    chain ??= import('@aws-sdk/credential-providers').then((m) => m.fromNodeProviderChain());
    return (await chain)();
  };
}

export class BedrockSigner {
  private chain: (() => Promise<AwsCredentials>) | null = null;
  private readonly byKey = new Map<string, { signer: SignatureV4; authorize: (request: UpstreamRequest) => Promise<Record<string, string>> }>();

  constructor(private readonly provider: string, readonly region: string) {}

  /** The `authorize` function of calls carrying `key` (static keys, or '' for the chain). */
  authorizerFor(key: string): (request: UpstreamRequest) => Promise<Record<string, string>> {
    return this.entryFor(key).authorize;
  }

  /** The signed headers of a request to `url` (model lists, made outside the proxy). */
  headersFor(key: string, method: 'GET' | 'POST', url: URL, headers: Record<string, string>, body: string | null): Promise<Record<string, string>> {
    return this.sign(this.entryFor(key).signer, method, url, headers, body);
  }

  private entryFor(key: string) {
    let entry = this.byKey.get(key);
    if (!entry) {
      const signer = new SignatureV4({ service: BEDROCK_SIGNING_SERVICE, region: this.region, sha256: Sha256, credentials: this.sourceOf(key) });
      const authorize = (request: UpstreamRequest) => this.sign(signer, request.method, new URL(request.path, request.origin), request.headers, request.body);
      entry = { signer, authorize };
      if (this.byKey.size >= 64) this.byKey.clear();
      this.byKey.set(key, entry);
    }
    return entry;
  }

  private sourceOf(key: string): CredentialSource {
    if (key === '') return (this.chain ??= nodeProviderChain());
    const keys = parseAwsKey(key);
    if (!keys) {
      return () => Promise.reject(new Error('the credential is not "accessKeyId:secretAccessKey[:sessionToken]"'));
    }
    return keys;
  }

  private async sign(signer: SignatureV4, method: string, url: URL, headers: Record<string, string>, body: string | null): Promise<Record<string, string>> {
    const query: Record<string, string> = {};
    for (const [name, value] of url.searchParams) query[name] = value;
    let signed;
    try {
      signed = await signer.sign({
        method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined,
        path: url.pathname, query, headers: Object.assign({}, headers, { host: url.host }), body: body ?? undefined,
      });
    } catch (err) {
      throw upstreamError({
        status: 502,
        message: `Provider "${this.provider}" has no usable AWS credentials (${(err as Error).message}). An operator must set static keys or make the AWS credential chain find some (environment, profile, role).`,
        cause: err,
      });
    }
    const added: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name !== 'host' && headers[name] === undefined) added[name] = String(value);
    }
    return added;
  }
}
