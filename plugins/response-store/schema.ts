/** Config of the response-store plugin, validated at boot (every field described and defaulted). */
import type { JsonSchema } from '../../core/json-schema.ts';

/** What a store at its quota does with one more response. */
export type OverQuota = 'expire-oldest' | 'refuse';

export interface ResponseStoreConfig {
  retentionDays: number;
  sweepIntervalMs: number;
  maxItemReferences: number;
  maxExpandedBytes: number;
  maxStoredResponsesPerUser: number;
  maxStoredBytesPerUser: number;
  overQuota: OverQuota;
}

const MIB = 1024 * 1024;

export const responseStoreSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    retentionDays: {
      type: 'integer',
      minimum: 1,
      default: 30,
      description: 'Days a stored response can be retrieved and continued (previous_response_id), counted from when it was answered (OpenAI keeps them 30 days).',
    },
    sweepIntervalMs: {
      type: 'integer',
      anyOf: [{ const: 0 }, { minimum: 1000 }],
      default: 600_000,
      description: 'How often expired responses are deleted, in batches, in the background (they are unreadable from expiry on either way); 0 = never (another process or job sweeps).',
    },
    maxItemReferences: {
      type: 'integer',
      minimum: 1,
      default: 1000,
      description: 'Most item_reference items one Responses request may hold (400 above it), checked before the store is read.',
    },
    maxExpandedBytes: {
      type: 'integer',
      minimum: 1024,
      default: 4 * MIB,
      description: 'Most stored bytes one Responses request may expand to, on top of its own body (server.maxBodyBytes): each item an item_reference names, counted every time it is named, plus every stored response its previous_response_id chain reads (whole, as stored). Above it: 413 request_too_large, before anything is parsed or sent.',
    },
    maxStoredResponsesPerUser: {
      type: 'integer',
      minimum: 1,
      default: 10_000,
      description: 'Most responses kept per gateway user (expired ones count until swept); over it, overQuota applies.',
    },
    maxStoredBytesPerUser: {
      type: 'integer',
      minimum: 1024,
      default: 64 * MIB,
      description: 'Most bytes kept per gateway user: every stored response\'s input items, response object (metadata included) and output items, in UTF-8 bytes; over it, overQuota applies.',
    },
    overQuota: {
      enum: ['expire-oldest', 'refuse'],
      default: 'expire-oldest',
      description: '"expire-oldest": each new response deletes the user\'s oldest ones until it fits. "refuse": a request that would store one more response while the user is at the quota gets 413 response_store_full (store: false still works); the response that crosses it is kept.',
    },
  },
};
