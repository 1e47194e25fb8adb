/**
 * Model groups (docs/architecture.md "Routing"): the manifest's `models` read once at boot into
 * groups of deployments. A string entry (`"claude-sonnet-4-5": "openai/gpt-5"`) is an alias, a group
 * of one deployment; an object entry lists deployments and a strategy. Each deployment names its
 * target as `provider/model`, resolved per request like a client's own model field (so an alias to
 * an id whose first segment is not a provider still goes through the catalog, as before groups).
 *
 * `createDeploymentPicker` orders a group's deployments for one request and counts the requests in
 * flight on each: `fallback` keeps the manifest order; `balance` repeatedly takes, among the
 * deployments not yet placed that have the fewest requests in flight, one at random by weight.
 */
import type { ModelGroupConfig } from '../schema.ts';
import type { ConfigProblem } from '../../../core/plugin.ts';

export interface Deployment {
  /** `provider/model`, resolved per request by `resolveModel`. */
  readonly target: string;
  /** Share of the traffic under `balance` (> 0). */
  readonly weight: number;
  /** A shared API key for this deployment only; null = the provider's. */
  readonly apiKey: string | null;
}

export interface ModelGroup {
  readonly name: string;
  readonly strategy: 'fallback' | 'balance';
  readonly deployments: readonly Deployment[];
}

/** The manifest's `models` as groups, by the name clients use. */
export function modelGroupsOf(models: Readonly<Record<string, string | ModelGroupConfig>>): Map<string, ModelGroup> {
  const groups = new Map<string, ModelGroup>();
  for (const [name, entry] of Object.entries(models)) {
    if (typeof entry === 'string') {
      groups.set(name, { name, strategy: 'fallback', deployments: [{ target: entry, weight: 1, apiKey: null }] });
      continue;
    }
    // Ajv leaves defaults inside `oneOf` unapplied, hence the fallbacks here.
    const deployments = entry.deployments.map((d) => ({ target: `${d.provider}/${d.model}`, weight: d.weight ?? 1, apiKey: d.apiKey || null }));
    groups.set(name, { name, strategy: entry.strategy ?? 'fallback', deployments });
  }
  return groups;
}

/**
 * The manifest's model groups (object entries of `models`) whose deployments name a provider that
 * `providers` does not define, one problem per deployment at its `provider` field: `tollgate check`
 * and the start refuse them, where such a deployment used to be skipped at every request with only
 * a warning at start. (A string alias is not checked: its first segment may be part of a model id the
 * catalog resolves, as for a client's own model field.)
 */
export function unconfiguredGroupProviders(
  models: Readonly<Record<string, string | ModelGroupConfig>>, providers: Readonly<Record<string, unknown>>,
): ConfigProblem[] {
  const configured = Object.keys(providers);
  const problems: ConfigProblem[] = [];
  for (const [name, entry] of Object.entries(models)) {
    if (typeof entry === 'string') continue;
    entry.deployments.forEach((d, i) => {
      if (Object.hasOwn(providers, d.provider)) return;
      problems.push({
        pointer: `/models/${name.replace(/~/g, '~0').replace(/\//g, '~1')}/deployments/${i}/provider`,
        message: `model group "${name}" names provider "${d.provider}", which is not configured (providers: ${configured.join(', ') || 'none'})`,
      });
    });
  }
  return problems;
}

/** The provider ids the groups name that are not configured, as `group → provider`, for a boot warning. */
export function unknownProviders(groups: ReadonlyMap<string, ModelGroup>, providers: ReadonlySet<string>): string[] {
  const unknown: string[] = [];
  for (const group of groups.values()) {
    for (const d of group.deployments) {
      const id = d.target.slice(0, d.target.indexOf('/'));
      if (!providers.has(id)) unknown.push(`${group.name} → ${id}`);
    }
  }
  return unknown;
}

export interface DeploymentPicker {
  /** The order in which `group`'s deployments are tried for one request. */
  order(group: ModelGroup): Deployment[];
  /**
   * Counts a request in flight on `deployment` when it belongs to a `balance` group (the only
   * counts `order` reads); the returned function ends it (idempotent).
   */
  begin(deployment: Deployment): () => void;
  /** Requests in flight on `deployment` now (0 for one that is not counted). */
  inFlight(deployment: Deployment): number;
}

/** What `begin` returns for a deployment whose requests in flight nobody reads. */
const NOT_COUNTED = (): void => {};

/**
 * `random` returns [0, 1) (injectable for tests; default `Math.random`).
 *
 * Only the deployments of `balance` groups are counted: their counts are what `order` reads. Their
 * entries stay at zero instead of being deleted, and a request to a `provider/model` target (a
 * deployment made for that request) is not counted at all: an entry added and deleted per request
 * is the churn that fills the old generation (`core/http/running-exchanges.ts` says how; ~100 bytes a
 * request here).
 */
export function createDeploymentPicker(random: () => number = Math.random): DeploymentPicker {
  /** A `balance` group's deployments (configured at boot, so a bounded set), by requests in flight. */
  const busy = new Map<Deployment, number>();
  const inFlight = (d: Deployment) => busy.get(d) ?? 0;

  function byWeight(candidates: readonly Deployment[]): Deployment {
    const total = candidates.reduce((sum, d) => sum + d.weight, 0);
    let point = random() * total;
    for (const d of candidates) {
      point -= d.weight;
      if (point < 0) return d;
    }
    return candidates.at(-1)!;
  }

  return {
    order(group) {
      if (group.strategy === 'fallback' || group.deployments.length === 1) return [...group.deployments];
      const left = [...group.deployments];
      for (const d of left) if (!busy.has(d)) busy.set(d, 0);
      const ordered: Deployment[] = [];
      while (left.length > 0) {
        const least = Math.min(...left.map(inFlight));
        const pick = byWeight(left.filter((d) => inFlight(d) === least));
        ordered.push(pick);
        left.splice(left.indexOf(pick), 1);
      }
      return ordered;
    },
    begin(deployment) {
      const count = busy.get(deployment);
      if (count === undefined) return NOT_COUNTED;
      busy.set(deployment, count + 1);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        busy.set(deployment, Math.max(0, inFlight(deployment) - 1));
      };
    },
    inFlight,
  };
}
