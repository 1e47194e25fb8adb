/**
 * How a call carries its Azure credential. An API key goes as `api-key: <key>` (Azure's own header;
 * `Authorization: Bearer` is for Microsoft Entra ID tokens), on the v1 and the deployment API alike.
 *
 * A call without a key, when the manifest has `entra`, carries a Microsoft Entra ID token instead,
 * added at dispatch (`entra.ts`). Nothing else in the provider reads the key.
 *
 * Source: https://learn.microsoft.com/azure/ai-foundry/openai/reference (Authentication).
 */
import type { Credential } from '../base.ts';

/** `api-key: <key>`; none without a key (the upstream then answers 401). */
export function azureAuthHeaders(credential: Credential): Record<string, string> {
  return credential.apiKey ? { 'api-key': credential.apiKey } : {};
}
