/**
 * guardrails: block or redact what a request sends and what its answer says, by rule (docs/plugins.md
 * "Guardrails"). Built on the public plugin SDK alone, like an operator's plugin (bin/check-layers.js
 * enforces it), and hosted behind the same isolation.
 *
 * - Input: `onRequest` reads the canonical request's texts once: a block rule's match refuses the
 *   request; a redact rule's matches are counted and the redacted text kept, which
 *   `rewriteRequestText` (run over the canonical request and the client's own body alike) hands back.
 *   External checks run last, on the texts as redacted, so a check service never sees what a rule hid.
 * - Output: `rewriteAnswerText` runs each choice through a chain of stream redactors (one per rule):
 *   nothing a rule matches reaches the client, however the stream is cut.
 * Hits go to the log row (`guardrails.<rule>`: the count) and to
 * `tollgate_plugin_guardrails_hits_total{rule,direction,action}`, never the text.
 */
import { definePlugin, gatewayError, logField, type Counter, type Exchange, type GatewayErrorLike } from '../../core/sdk/index.ts';
import { createAnswerGuard, type AnswerGuard } from './answer-guard.ts';
import { runExternalCheck } from './external-check.ts';
import { findAll, redact } from './redact.ts';
import { activeRules, checkConfig, compileRules, requestTexts, type ActiveRules, type Rule } from './rules.ts';
import { configSchema, type Direction, type GuardrailsConfig } from './schema.ts';

/** One request's guardrail state. */
interface GuardState {
  /** The rules that apply, decided in `onRequest`; null until then (and on endpoints without a request). */
  rules: ActiveRules | null;
  /** Hits per rule name, both directions together: what the log field says. */
  hits: Map<string, number>;
  /** Each canonical text as the input rules left it (`rewriteRequestText` looks it up). */
  rewritten: Map<string, string>;
  answers: Map<number, AnswerGuard>;
}

/** The answer a blocked request or answer gets: it names the rule, never the text. */
function blocked(rule: Rule, direction: Direction, note = ''): GatewayErrorLike {
  return gatewayError(400, 'content_blocked', `Blocked by guardrail rule "${rule.name}"${note}.`, direction === 'input' ? { param: 'messages' } : {});
}

export const guardrails = definePlugin<GuardrailsConfig, GuardState>({
  name: 'guardrails',
  version: '1.0.0',
  description: 'Blocks or redacts emails, phone numbers, payment cards, IBANs, secrets and operator patterns in requests and answers, per user, key or model; optional external check.',
  configSchema,
  checkConfig,
  order: [
    { relation: 'after', plugin: 'auth-guard', why: 'rules match users and keys, which authentication sets' },
    { relation: 'after', plugin: 'response-store', why: 'a continuation must be checked with the whole conversation response-store expands' },
    { relation: 'before', plugin: 'cache', why: 'a cached answer is served from the cache\'s onRequest: the request must be checked first, and the replayed answer goes through the output rules' },
  ],
  create(config, ctx) {
    const rules = compileRules(config);
    const hitsTotal: Counter = ctx.metrics.counter({
      name: 'hits_total', help: 'Guardrail matches (an external check that blocked counts one), by rule, direction (input, output) and action (block, redact).',
      labelNames: ['rule', 'direction', 'action'],
    });
    const checksTotal: Counter = ctx.metrics.counter({
      name: 'external_checks_total', help: 'External checks by rule and outcome: passed, blocked, timeout, error (the last two decided by the rule\'s failMode).',
      labelNames: ['rule', 'outcome'],
    });

    function hit(ex: Exchange, state: GuardState, rule: Rule, direction: Direction, count: number): void {
      const total = (state.hits.get(rule.name) ?? 0) + count;
      state.hits.set(rule.name, total);
      logField(ex, `guardrails.${rule.name}`, total);
      hitsTotal.inc({ rule: rule.name, direction, action: rule.action }, count);
    }

    /**
     * `text` through the local input rules: a block rule's match throws, a redact rule's are replaced.
     * `count` false: the hits were counted already (the client's own body repeats the canonical texts).
     */
    function guardInput(ex: Exchange, state: GuardState, active: readonly Rule[], text: string, count: boolean): string {
      let out = text;
      for (const rule of active) {
        if (rule.external !== null) continue;
        const matches = findAll(out, rule.detectors);
        if (matches.length === 0) continue;
        if (count || rule.action === 'block') hit(ex, state, rule, 'input', matches.length);
        if (rule.action === 'block') throw blocked(rule, 'input');
        out = redact(out, matches);
      }
      return out;
    }

    async function checkExternally(ex: Exchange, state: GuardState, rule: Rule, texts: string[]): Promise<void> {
      const outcome = await runExternalCheck(rule.external!, texts, ex.signal);
      checksTotal.inc({ rule: rule.name, outcome });
      if (outcome === 'passed') return;
      if (outcome === 'blocked') {
        hit(ex, state, rule, 'input', 1);
        throw blocked(rule, 'input');
      }
      logField(ex, `guardrails.${rule.name}.check`, outcome);
      ctx.log.warn('guardrail external check failed', { requestId: ex.id, rule: rule.name, outcome, failMode: rule.external!.failMode });
      if (rule.external!.failMode === 'closed') throw blocked(rule, 'input', ' (its check could not be completed)');
    }

    return {
      createState: () => ({ rules: null, hits: new Map(), rewritten: new Map(), answers: new Map() }),

      async onRequest(ex, state) {
        if (ex.request === null) return;
        const active = activeRules(rules, ex);
        state.rules = active;
        if (active.input.length === 0) return;
        const texts = requestTexts(ex.request).map((text) => {
          const out = guardInput(ex, state, active.input, text, true);
          state.rewritten.set(text, out);
          return out;
        });
        for (const rule of active.input) {
          if (rule.external !== null) await checkExternally(ex, state, rule, texts);
        }
      },

      rewriteRequestText(ex, state, text) {
        const active = state.rules?.input;
        if (!active || active.length === 0) return text;
        return state.rewritten.get(text) ?? guardInput(ex, state, active, text, false);
      },

      rewriteAnswerText(ex, state, text, end, choiceIndex) {
        const active = state.rules?.output;
        if (!active || active.length === 0) return text;
        let guard = state.answers.get(choiceIndex);
        if (guard === undefined) {
          guard = createAnswerGuard(active, (rule, match) => {
            hit(ex, state, rule, 'output', 1);
            if (rule.action === 'block') throw blocked(rule, 'output');
            return `[REDACTED:${match.detector}]`;
          });
          state.answers.set(choiceIndex, guard);
        }
        return guard.push(text, end);
      },
    };
  },
});
