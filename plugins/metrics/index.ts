/** metrics: placeholder, replaced by the real plugin. */
import type { PluginFactory } from '../../core/plugin.ts';

export const metrics: PluginFactory = {
  name: 'metrics',
  description: 'metrics (placeholder)',
  configSchema: { type: 'object', additionalProperties: true, properties: {} },
  create: () => ({ name: 'metrics' }),
};
