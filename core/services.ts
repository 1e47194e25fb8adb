/**
 * Services plugins offer each other at run time (pricing offers its price book to budget and the
 * router, budget and rate-limit offer their state to the account endpoint, ...). The core knows no
 * plugin: each plugin adds its entry to `GatewayServices` by declaration merging, in its own folder:
 *
 * ```ts
 * declare module '../../core/services.ts' {
 *   interface GatewayServices { pricing: PriceBook }
 * }
 * ```
 *
 * A plugin `provide`s in its factory; others `get` in their hooks (plugins are created in manifest
 * order, so a service from a later plugin does not exist yet while an earlier one is created).
 * A service that is absent means that plugin is not in the manifest; callers must cope.
 */

// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface GatewayServices {}

export interface ServiceRegistry {
  /** Offers `service` under `name`. Throws if the name is taken (two plugins of one kind). */
  provide<K extends keyof GatewayServices>(name: K, service: GatewayServices[K]): void;
  /** The service, or undefined when no plugin in the manifest offers it. */
  get<K extends keyof GatewayServices>(name: K): GatewayServices[K] | undefined;
}

export function createServiceRegistry(): ServiceRegistry {
  const services = new Map<PropertyKey, unknown>();
  return {
    provide(name, service) {
      if (services.has(name)) throw new Error(`service "${String(name)}" is provided twice`);
      services.set(name, service);
    },
    get(name) {
      return services.get(name) as GatewayServices[typeof name] | undefined;
    },
  };
}
