/**
 * The plugin registry: every plugin a manifest may name. Explicit on purpose: no directory scanning,
 * no side-effect registration.
 */
import type { PluginFactory } from '../core/plugin.ts';
import { authGuard } from './auth-guard/index.ts';
import { logger } from './logger/index.ts';
import { metrics } from './metrics/index.ts';
import { rateLimit } from './rate-limit/index.ts';
import { budget } from './budget/index.ts';
import { pricing } from './pricing/index.ts';
import { account } from './account/index.ts';
import { responseStore } from './response-store/index.ts';
import { providerRouter } from './provider-router/index.ts';
import { hostPlugin } from '../core/sdk/host.ts';
import { guardrails } from './guardrails/index.ts';

/**
 * First-party plugins written on the public SDK: hosted like an operator's module (the same isolation,
 * hook timing and `hookTimeoutMs`), so they prove the SDK and get no private door. Opt-in: not in the
 * default manifest.
 */
const sdkPlugins: PluginFactory[] = [hostPlugin(guardrails, { kind: 'built-in', specifier: null, path: null })];

export const pluginRegistry: ReadonlyMap<string, PluginFactory> = new Map<string, PluginFactory>(
  [authGuard, logger, metrics, responseStore, rateLimit, budget, pricing, account, providerRouter, ...sdkPlugins].map((f) => [f.name, f]),
);
