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
import cache from './cache/index.ts';
import { guardrails } from './guardrails/index.ts';

/**
 * The response cache and the guardrails are written on the public SDK (`tollgate/plugin`) and hosted
 * behind the same isolation as an operator's module. Opt-in: the default manifest lists neither.
 */
const hostedCache = hostPlugin(cache, { kind: 'built-in', specifier: null, path: null });
const hostedGuardrails = hostPlugin(guardrails, { kind: 'built-in', specifier: null, path: null });

export const pluginRegistry: ReadonlyMap<string, PluginFactory> = new Map<string, PluginFactory>(
  [authGuard, logger, metrics, responseStore, rateLimit, hostedGuardrails, hostedCache, budget, pricing, account, providerRouter].map((f) => [f.name, f]),
);
