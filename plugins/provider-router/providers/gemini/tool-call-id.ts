/**
 * Tool-call ids for Gemini function calls. Gemini's calls carry no id, so one is generated; a call's
 * `thoughtSignature` (required on replay by Gemini 3, https://ai.google.dev/gemini-api/docs/thought-signatures)
 * is carried inside the id (`call_<hex>_sig_<base64url>`) and put back on the `functionCall` part
 * when the client replays it.
 */
import { toolCallId } from '../canonical.ts';

/** Marks a generated tool-call id that carries a Gemini thought signature: `call_<hex>_sig_<base64url>`. */
const SIGNED_ID = /^call_[0-9a-f]{24}_sig_([A-Za-z0-9_-]+)$/;

/**
 * A tool-call id for a Gemini function call, carrying its thought signature when it has one. The
 * signature (base64) is re-encoded as base64url so the id stays within `[A-Za-z0-9_-]`, the id
 * alphabet other providers accept if the conversation moves on.
 */
export function encodeToolCallId(signature: string | undefined): string {
  if (!signature) return toolCallId();
  return `${toolCallId()}_sig_${signature.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** The thought signature (standard, padded base64) a tool-call id made by `encodeToolCallId` carries. */
export function signatureOf(id: string): string | undefined {
  const encoded = SIGNED_ID.exec(id)?.[1];
  if (!encoded) return undefined;
  const base64 = encoded.replace(/-/g, '+').replace(/_/g, '/');
  return base64 + '='.repeat((4 - (base64.length % 4)) % 4);
}
