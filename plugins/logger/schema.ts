import type { JsonSchema } from '../../core/json-schema.ts';

export interface LoggerConfig {
  batchSize: number;
  flushIntervalMs: number;
  maxQueueSize: number;
}

export const loggerSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    batchSize: {
      type: 'integer', minimum: 1, maximum: 5_000, default: 200,
      description: 'Rows per transaction; a full batch is written at once.',
    },
    flushIntervalMs: {
      type: 'integer', minimum: 10, default: 50,
      description: 'Longest a row (and the spend of its request) waits in memory before it is written, in ms: what a crash (kill -9, power cut) can lose. A graceful stop loses nothing.',
    },
    maxQueueSize: {
      type: 'integer', minimum: 1, default: 100_000,
      description: 'Rows held in memory while the database cannot be written (locked, disk full). Past this the oldest are dropped and counted in the server log.',
    },
  },
};
