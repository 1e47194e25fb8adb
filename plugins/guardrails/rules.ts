/**
 * The guardrails' rules, compiled once at start: each rule's detectors, which requests it applies to,
 * and the texts of a request it reads. Also the config checks the schema cannot state (`checkConfig`).
 */
import type { ConfigProblem, Exchange } from '../../core/sdk/index.ts';
import { BUILT_IN_DETECTORS, compilePattern, type Detector } from './detectors.ts';
import type { ExternalConfig, GuardrailsConfig, MatchConfig, RuleConfig } from './schema.ts';

/** A rule ready to run. */
export interface Rule {
  readonly name: string;
  readonly action: 'block' | 'redact';
  readonly input: boolean;
  readonly output: boolean;
  /** Empty for an external rule. */
  readonly detectors: readonly Detector[];
  readonly external: ExternalConfig | null;
  /** Whether the rule applies to a request; always true without `match`. */
  readonly applies: (ex: Exchange) => boolean;
}

/** The rules that apply to one request, per direction, block rules first (they must see the text unredacted). */
export interface ActiveRules {
  readonly input: readonly Rule[];
  readonly output: readonly Rule[];
}

const BUILT_IN = new Map(BUILT_IN_DETECTORS.map((d) => [d.id, d]));

/** A glob (`*` any run, `?` one character) as an anchored regex. */
function globRegex(glob: string): RegExp {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}

function matcher(match: MatchConfig | undefined): (ex: Exchange) => boolean {
  if (match === undefined) return () => true;
  const users = match.users ? new Set(match.users) : null;
  const keys = match.keys ? new Set(match.keys) : null;
  const models = match.models ? match.models.map(globRegex) : null;
  return (ex) => {
    const { principal, request } = ex;
    if (users && !(principal && users.has(principal.gatewayUserName))) return false;
    if (keys && !(principal && keys.has(principal.apiKeyId))) return false;
    if (models) {
      const model = request?.model;
      if (typeof model !== 'string' || !models.some((glob) => glob.test(model))) return false;
    }
    return true;
  };
}

/** Rule `rule`'s problems, at pointers under `/rules/<index>`. */
function ruleProblems(rule: RuleConfig, index: number): ConfigProblem[] {
  const at = `/rules/${index}`;
  const problems: ConfigProblem[] = [];
  const local = (rule.detectors?.length ?? 0) + (rule.patterns?.length ?? 0);
  if (rule.external) {
    if (local > 0) problems.push({ pointer: `${at}/external`, message: 'a rule with an external check has no detectors or patterns: make them a rule of their own' });
    if (rule.applyTo !== 'input') problems.push({ pointer: `${at}/applyTo`, message: 'an external check applies to input only (answer text is rewritten synchronously, with no time to call out)' });
    if (rule.action !== 'block') problems.push({ pointer: `${at}/action`, message: 'an external check can only block' });
  } else if (local === 0) {
    problems.push({ pointer: at, message: 'a rule needs detectors, patterns or an external check' });
  }
  rule.patterns?.forEach((p, k) => {
    try {
      compilePattern(p.pattern, p.flags ?? '', { id: p.id ?? rule.name, ...(p.maxMatchChars === undefined ? {} : { maxMatchChars: p.maxMatchChars }) });
    } catch (err) {
      problems.push({ pointer: `${at}/patterns/${k}/pattern`, message: (err as Error).message });
    }
  });
  return problems;
}

/** What the schema cannot say: unique names, one kind per rule, regexes that compile. Never throws. */
export function checkConfig(config: GuardrailsConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  config.rules.forEach((rule, index) => {
    if (seen.has(rule.name)) problems.push({ pointer: `/rules/${index}/name`, message: `another rule is named "${rule.name}"` });
    seen.add(rule.name);
    problems.push(...ruleProblems(rule, index));
  });
  return problems;
}

/** Compiles the rules `checkConfig` accepted. */
export function compileRules(config: GuardrailsConfig): Rule[] {
  return config.rules.map((rule) => ({
    name: rule.name,
    action: rule.action,
    input: rule.applyTo !== 'output',
    output: rule.applyTo !== 'input',
    detectors: [
      ...(rule.detectors ?? []).map((id) => BUILT_IN.get(id)!),
      ...(rule.patterns ?? []).map((p) => compilePattern(p.pattern, p.flags ?? '', {
        id: p.id ?? rule.name, ...(p.maxMatchChars === undefined ? {} : { maxMatchChars: p.maxMatchChars }),
      })),
    ],
    external: rule.external ?? null,
    applies: matcher(rule.match),
  }));
}

/** The rules that apply to `ex`, block rules first in each direction. */
export function activeRules(rules: readonly Rule[], ex: Exchange): ActiveRules {
  const applying = rules.filter((rule) => rule.applies(ex));
  const ordered = [...applying.filter((r) => r.action === 'block'), ...applying.filter((r) => r.action === 'redact')];
  return { input: ordered.filter((r) => r.input), output: ordered.filter((r) => r.output) };
}

/**
 * Every text of a canonical request the gateway lets plugins rewrite: message contents and text parts
 * of every role, refusals, an embeddings request's string inputs.
 */
export function requestTexts(request: Exchange['request']): string[] {
  if (request === null) return [];
  const texts: string[] = [];
  if ('messages' in request) {
    for (const message of request.messages) {
      const { content } = message;
      if (typeof content === 'string') texts.push(content);
      else if (Array.isArray(content)) {
        for (const part of content as ReadonlyArray<{ type?: unknown; text?: unknown }>) {
          if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
        }
      }
      if (typeof message.refusal === 'string') texts.push(message.refusal);
    }
    return texts;
  }
  const { input } = request;
  if (typeof input === 'string') texts.push(input);
  else if (Array.isArray(input)) for (const item of input as unknown[]) if (typeof item === 'string') texts.push(item);
  return texts;
}
