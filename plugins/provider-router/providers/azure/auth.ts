/**
 * How a call carries its Azure credential. An API key goes as `api-key: <key>` (Azure's own header;
 * `Authorization: Bearer` is for Microsoft Entra ID tokens), on the v1 and the deployment API alike.
 *
 * Entra ID (client secret, managed identity through `@azure/identity`) is not in this slice: it would
 * add a token source to the provider's settings and, here, `Authorization: Bearer <token>` from it
 * (cached until near expiry, scope `https://cognitiveservices.azure.com/.default`), chosen when the
 * credential is a token source rather than a key. Nothing else in the provider reads the key.
 *
 * Source: https://learn.microsoft.com/azure/ai-foundry/openai/reference (Authentication).
 */
import type { Credential } from '../base.ts';

/** `api-key: <key>`; none without a key (the upstream then answers 401). */
export function azureAuthHeaders(credential: Credential): Record<string, string> {
  return credential.apiKey ? { 'api-key': credential.apiKey } : {};
}
