/** rate-limit: placeholder, replaced by the real plugin. */
import type { PluginFactory } from '../../core/plugin.ts';

export const rateLimit: PluginFactory = {
  name: 'rate-limit',
  description: 'rate-limit (placeholder)',
  configSchema: { type: 'object', additionalProperties: true, properties: {} },
  create: () => ({ name: 'rate-limit' }),
};
