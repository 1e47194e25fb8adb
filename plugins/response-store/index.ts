/**
 * response-store: the gateway keeps OpenAI Responses itself, so `previous_response_id` works on every
 * provider, also when a conversation moves between providers, and answers `GET /api/v1/responses/{id}`,
 * `DELETE /api/v1/responses/{id}` and `GET /api/v1/responses/{id}/input_items` for the caller's own
 * responses (another user's id is a 404, as an unknown one).
 *
 * - Keeping: unless the request says `store: false`, each completed or incomplete response (its own
 *   input items and the final response object, `store.ts`) is written in `onResponseComplete`, which
 *   the core awaits before the answer's last bytes: a `previous_response_id` sent as soon as the final
 *   event arrives finds it. Rows live `retentionDays` and a background sweep deletes them in batches.
 * - Continuing: in `onRequest`, before rate-limit and budget (their worst case must count the whole
 *   conversation), `previous_response_id` is looked up for the caller (missing → 400
 *   `previous_response_not_found`, OpenAI's answer) and its chain walked back (one recursive query, an
 *   indexed lookup per turn, at most `MAX_CHAIN_DEPTH`; a deleted or expired ancestor ends the walk). Every turn's input
 *   and output items, then the request's own input, make the input of a body without
 *   `previous_response_id` that the dialect parses again: `ex.request` (what translating providers,
 *   limits and budgets read) and `ex.untranslatable` are those of the whole conversation. The earlier
 *   turns' `instructions` are not carried over (OpenAI's semantics).
 * - `ex.clientBody` stays the client's own body, so a translated answer echoes its
 *   `previous_response_id`, and a native pass-through to the provider that stored the parent itself
 *   (`served_natively`, same provider) forwards it byte for byte: that upstream holds the chain. Any
 *   other native pass-through cannot resolve the id, so `beforeUpstream` (once the router has chosen
 *   the target) swaps in the expanded body and rebuilds the call (`UpstreamCall.rebuild`). Deciding
 *   there, rather than expanding late, keeps the expansion ahead of the limits that read it.
 * - Bounds (issue 39): a request names at most `maxItemReferences` references and at most
 *   `maxExpandedBytes` of stored items (`references.ts`; the chain's rows count whole), checked before
 *   anything is parsed, so a small request cannot make the gateway parse or send a stored response
 *   many times over. Each user keeps at most `maxStoredResponsesPerUser` responses and
 *   `maxStoredBytesPerUser` bytes (`response_totals`, kept by triggers): over it the insert deletes the
 *   user's oldest responses (`overQuota: "expire-oldest"`), or a request that would store one more is
 *   refused with 413 while the quota is full (`"refuse"`). The store's size is in `/metrics`
 *   (`store-gauges.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { definePlugin, reply } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { expansionTooLarge, previousResponseNotFound, responseNotFound, responseStoreFull } from '../../core/errors.ts';
import { RESPONSES_CREATE } from '../../core/dialects/openai-responses/index.ts';
import { conversationInput, normalizeInput, type Item } from './conversation.ts';
import { inputItemsPage } from './input-items.ts';
import type { Store } from '../../core/store/store.ts';
import type { NewStoredResponse, ResponseTable, StoredResponse, StoreQuota } from './store.ts';
import { createSqliteResponseTable } from './store-sqlite.ts';
import { createPostgresResponseTable } from './store-postgres.ts';
import { RESPONSES_DELETE, RESPONSES_INPUT_ITEMS, RESPONSES_RETRIEVE, responseStoreRoutes } from './routes.ts';
import { responseStoreSchema, type ResponseStoreConfig } from './schema.ts';
import { createSweeper } from './sweep.ts';
import { isStoreUnavailableError } from '../../core/store/store-errors.ts';
import { checkReferenceCount, resolveReferences, type ExpansionBudget, type Holder } from './references.ts';
import { registerStoreGauges } from './store-gauges.ts';

/** The longest chain of turns a continuation replays (each an indexed lookup within one query). */
export const MAX_CHAIN_DEPTH = 1000;

const DAY_MS = 86_400_000;
/**
 * Waits before each new try of a response's insert that found the store unavailable, ms (about 2 s
 * in all). While serving, SQLite waits only a few ms for another process's lock
 * (`SERVING_BUSY_TIMEOUT_MS`), so a CLI command holding the write lock a little longer would lose
 * the response: the client already has its 200 and a `resp_…` id that no continuation could find.
 * Waiting asynchronously here holds only this answer's last bytes, not the event loop.
 */
const INSERT_RETRY_DELAYS_MS = [10, 20, 40, 80, 160, 320, 640, 800];

interface ExchangeState {
  /** True when this exchange's response is to be kept (a Responses create without `store: false`). */
  keep: boolean;
  /** The request's own input, normalized (`conversation.ts`). */
  ownInput: Item[];
  previousResponseId: string | null;
  /**
   * Every stored response the request draws on (the parent, the responses its `item_reference`s point
   * into): when one native upstream stored them all, a pass-through to it may name them unchanged.
   */
  holders: Holder[];
  /** The client's body with the whole conversation as `input` and no `previous_response_id`. */
  expandedBody: Readonly<Record<string, unknown>> | null;
  /** True when the call went out as a native pass-through. */
  passthrough: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function createResponseStore(config: ResponseStoreConfig, ctx: PluginContext): Plugin<ExchangeState> {
  const table = createResponseTable(ctx.store);
  const sweeper = createSweeper(table, ctx.clock, ctx.log, config.sweepIntervalMs);
  registerStoreGauges(ctx.metrics, table, ctx.log);
  const quota: StoreQuota = { maxResponses: config.maxStoredResponsesPerUser, maxBytes: config.maxStoredBytesPerUser };

  /**
   * The caller's stored turns ending with `id`, oldest first, within what `budget` has left. Rejects
   * with 400 when `id` itself is not stored, 413 when the chain reads more than the budget.
   */
  async function chainOf(userId: number, id: string, nowMs: number, budget: ExpansionBudget): Promise<StoredResponse[]> {
    const { turns, overBytes } = await table.chain(userId, id, nowMs, { maxDepth: MAX_CHAIN_DEPTH, maxBytes: budget.leftBytes });
    if (overBytes) throw expansionTooLarge(budget.maxBytes);
    if (turns.length === 0) throw previousResponseNotFound(id);
    return turns.reverse();
  }

  /**
   * With `overQuota: "refuse"`: 413 when the user's stored responses already fill the quota (their
   * expired ones, not swept yet, are deleted first). The response that crosses it is still kept, so
   * the store exceeds the quota by at most the responses in flight.
   */
  async function refuseWhenFull(userId: number, nowMs: number): Promise<void> {
    const full = (used: { responseCount: number; bytes: number }) => used.responseCount >= quota.maxResponses || used.bytes >= quota.maxBytes;
    let used = await table.totalsOf(userId);
    if (!full(used)) return;
    if ((await table.removeExpiredOf(userId, nowMs)) > 0) used = await table.totalsOf(userId);
    if (used.responseCount >= quota.maxResponses) throw responseStoreFull(`${used.responseCount} responses`, `${quota.maxResponses}`);
    if (used.bytes >= quota.maxBytes) throw responseStoreFull(`${used.bytes} bytes`, `${quota.maxBytes}`);
  }

  /**
   * Records what to keep and, for a continuation, puts the whole conversation in `ex.request`. Reads
   * the store (a Promise) only when the request continues or references stored items, or when a full
   * store refuses: a plain create stays synchronous.
   */
  function prepareCreate(ex: Exchange, state: ExchangeState, userId: number): Promise<void> | undefined {
    const body = ex.clientBody;
    if (!body || !ex.dialect) return undefined;
    state.keep = body.store !== false;
    const ownInput = normalizeInput(body.input);
    state.ownInput = ownInput;
    const id = body.previous_response_id;
    const continues = typeof id === 'string' && id !== '';
    const references = checkReferenceCount(ownInput, config.maxItemReferences);
    const refusing = state.keep && config.overQuota === 'refuse';
    if (!continues && references === 0 && !refusing) return undefined;
    return (async () => {
      if (refusing) await refuseWhenFull(userId, ctx.clock());
      if (continues || references > 0) await expandConversation(ex, state, userId, continues ? id : null);
    })();
  }

  async function expandConversation(ex: Exchange, state: ExchangeState, userId: number, id: string | null): Promise<void> {
    const body = ex.clientBody!;
    const nowMs = ctx.clock();
    const budget: ExpansionBudget = { maxBytes: config.maxExpandedBytes, leftBytes: config.maxExpandedBytes };
    const referenced = await resolveReferences(table, state.ownInput, userId, nowMs, budget);
    state.ownInput = referenced.items;
    state.holders = referenced.holders;
    if (id === null && referenced.holders.length === 0) return;
    const chain = id !== null ? await chainOf(userId, id, nowMs, budget) : [];
    if (id !== null) {
      state.previousResponseId = id;
      state.holders.push(chain.at(-1)!);
    }
    const turns = chain.map((turn) => ({ inputItems: turn.inputItems, output: outputOf(turn), servedNatively: turn.servedNatively }));
    const { previous_response_id: _continued, ...rest } = body;
    // `rest` is a fresh object already: the continued input is set on it.
    const continued: Record<string, unknown> = rest;
    continued.input = conversationInput(turns, state.ownInput);
    const parsed = ex.dialect!.parseRequest(continued, ex.operation, ex.headers);
    ex.request = parsed.canonical;
    ex.untranslatable = parsed.untranslatable ?? null;
    // The references still in the input are the ones the store does not hold.
    ex.ownCredentialOnly = parsed.ownCredentialOnly ?? null;
    ex.promptTokensEstimate = null;
    state.expandedBody = parsed.body;
  }

  async function answerRoute(ex: Exchange, userId: number) {
    const id = ex.params.id ?? '';
    const nowMs = ctx.clock();
    if (ex.operation === RESPONSES_DELETE) {
      if (!(await table.remove(userId, id, nowMs))) throw responseNotFound(id);
      return reply(200, { id, object: 'response', deleted: true });
    }
    const stored = await table.find(userId, id, nowMs);
    if (!stored) throw responseNotFound(id);
    return reply(200, ex.operation === RESPONSES_RETRIEVE ? stored.response : inputItemsPage(id, stored.inputItems, ex.query));
  }

  /**
   * Inserts `row`, trying again after `INSERT_RETRY_DELAYS_MS` while the store is unavailable (locked,
   * busy, unreachable); any other error, or the last one, is thrown (the core logs it). A response
   * larger than `maxStoredBytesPerUser` on its own (expire-oldest) is not stored and deletes nothing:
   * its size is known only once the answer's status is sent, too late for refuse mode's 413, so the
   * client keeps its 200 and a continuation of it gets 400 `previous_response_not_found`; logged.
   */
  async function insertPatiently(row: NewStoredResponse, rowQuota: StoreQuota | null): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(await table.insert(row, rowQuota))) {
          ctx.log.warn('response-store: a response larger than maxStoredBytesPerUser on its own is not stored', { responseId: row.id, maxBytes: quota.maxBytes });
        }
        return;
      } catch (err) {
        const delayMs = INSERT_RETRY_DELAYS_MS[attempt];
        if (delayMs === undefined || !isStoreUnavailableError(err)) throw err;
        if (attempt === 0) ctx.log.warn('response-store: the store is unavailable, storing the response is retried', { responseId: row.id, err });
        await sleep(delayMs);
      }
    }
  }

  return {
    name: 'response-store',
    createState: () => ({ keep: false, ownInput: [], previousResponseId: null, holders: [], expandedBody: null, passthrough: false }),
    onRequest(ex, state) {
      const userId = ex.principal?.gatewayUserId;
      if (ex.operation === RESPONSES_RETRIEVE || ex.operation === RESPONSES_DELETE || ex.operation === RESPONSES_INPUT_ITEMS) {
        if (userId === undefined) throw responseNotFound(ex.params.id ?? '');
        return answerRoute(ex, userId);
      }
      if (ex.operation === RESPONSES_CREATE && userId !== undefined) return prepareCreate(ex, state, userId);
      return undefined;
    },
    beforeUpstream(ex, state, call) {
      state.passthrough = call.passthrough === true;
      if (!state.expandedBody || !call.passthrough || call.kind === 'embeddings') return undefined;
      // The upstream holds everything the request names: the client's own body goes, unchanged.
      if (state.holders.every((held) => held.servedNatively && held.provider === ex.target?.provider)) return undefined;
      ex.clientBody = state.expandedBody;
      return call.rebuild?.();
    },
    onResponseComplete(ex, state, final) {
      if (!state.keep || !ex.principal || !ex.target || !isObject(final)) return;
      if (typeof final.id !== 'string' || (final.status !== 'completed' && final.status !== 'incomplete')) return;
      const nowMs = ctx.clock();
      return insertPatiently({
        gatewayUserId: ex.principal.gatewayUserId,
        id: final.id,
        createdAtMs: nowMs,
        expiresAtMs: nowMs + config.retentionDays * DAY_MS,
        model: String(ex.clientBody?.model ?? ''),
        provider: ex.target.provider,
        // Only an upstream that says it stored the response can be asked to continue it.
        servedNatively: state.passthrough && final.store === true,
        previousResponseId: state.previousResponseId,
        inputItems: state.ownInput,
        response: final,
      }, config.overQuota === 'expire-oldest' ? quota : null);
    },
    close() {
      return sweeper.stop();
    },
  };
}

/** The output items of a stored turn's response object. */
function outputOf(turn: StoredResponse): Item[] {
  const output = turn.response.output;
  return Array.isArray(output) ? output.filter(isObject) : [];
}

export { sweepExpired } from './sweep.ts';

/** The response table on the gateway's store (migrated to version 15 or later), for its engine. */
export function createResponseTable(store: Store): ResponseTable {
  return store.engine === 'sqlite' ? createSqliteResponseTable(store.sqlite) : createPostgresResponseTable(store.db);
}

export const responseStore = definePlugin<ResponseStoreConfig>({
  name: 'response-store',
  description: 'Keeps OpenAI Responses for previous_response_id on every provider, and answers GET/DELETE /api/v1/responses/{id} and its input_items.',
  configSchema: responseStoreSchema,
  routes: responseStoreRoutes,
  order: [
    { relation: 'after', plugin: 'auth-guard', why: 'responses are kept and read per gateway user, whom auth-guard identifies' },
    { relation: 'before', plugin: 'rate-limit', why: 'a continuation\'s token reservation must count the whole conversation, which response-store puts in the request' },
    { relation: 'before', plugin: 'budget', why: 'a continuation\'s budget reservation must count the whole conversation, which response-store puts in the request' },
  ],
  create: createResponseStore,
});
