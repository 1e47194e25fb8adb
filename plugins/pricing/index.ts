/** pricing: placeholder, replaced by the real plugin. */
import type { PluginFactory } from '../../core/plugin.ts';

export const pricing: PluginFactory = {
  name: 'pricing',
  description: 'pricing (placeholder)',
  configSchema: { type: 'object', additionalProperties: true, properties: {} },
  create: () => ({ name: 'pricing' }),
};
