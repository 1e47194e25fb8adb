/** account: placeholder, replaced by the real plugin. */
import type { PluginFactory } from '../../core/plugin.ts';

export const account: PluginFactory = {
  name: 'account',
  description: 'account (placeholder)',
  configSchema: { type: 'object', additionalProperties: true, properties: {} },
  create: () => ({ name: 'account' }),
};
