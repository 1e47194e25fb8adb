/** budget: placeholder, replaced by the real plugin. */
import type { PluginFactory } from '../../core/plugin.ts';

export const budget: PluginFactory = {
  name: 'budget',
  description: 'budget (placeholder)',
  configSchema: { type: 'object', additionalProperties: true, properties: {} },
  create: () => ({ name: 'budget' }),
};
