/**
 * An OpenAI Responses API upstream (`POST /v1/responses`) on 127.0.0.1, speaking the documented wire
 * format (https://platform.openai.com/docs/api-reference/responses/create ,
 * https://platform.openai.com/docs/api-reference/responses-streaming ; openai-node
 * `src/resources/responses/responses.ts`): a `response` object with `output` items and `usage`, or
 * named SSE events each with `type` and an increasing `sequence_number`, ending in
 * `response.completed`; errors as OpenAI's `{"error":{...}}`. `Authorization: Bearer` required.
 *
 * By model:
 * - `sim-tool`: when the request has function tools and its input ends without a
 *   `function_call_output`, calls the first tool with `{"city":"Paris"}` (`call_id` `call_sim_1`);
 *   otherwise answers `RESPONSES_TOOL_ANSWER`
 * - `sim-429`: 429 rate limit; `sim-failed`: streams one delta then `response.failed`
 * Every other model answers `RESPONSES_REPLY` in `RESPONSES_PIECES`. Each answer has its own id
 * (`resp_sim_0001`, ...) and echoes `store` (true unless the request says false) as OpenAI does; the
 * simulator keeps no state itself, so `previous_response_id` is only recorded.
 *
 * Started with `agent` it plays a scripted coding agent whatever the model (sim-agent.ts): offered a
 * function tool it knows (Codex's `exec_command`, ...), it answers one `function_call` of it, and once
 * the input ends with a `function_call_output` it answers `agent.answer`; item and call ids are unique
 * per answer. Requests without those tools get the normal reply. The stream is what Codex reads:
 * `response.output_item.done` carries each finished item, `response.completed` the usage.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';
import { agentToolCall, type SimAgent } from './sim-agent.ts';

export const RESPONSES_PIECES = ['Hello', ' from', ' the', ' Responses', ' simulator.'];
export const RESPONSES_REPLY = RESPONSES_PIECES.join('');
export const RESPONSES_TOOL_ANSWER = 'It is 18 °C in Paris.';
/** Usage of every answer; `input_tokens` includes the cached ones, `output_tokens` the reasoning ones. */
export const RESPONSES_USAGE = {
  input_tokens: 21, input_tokens_details: { cached_tokens: 5 }, output_tokens: 13, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 34,
};

export interface ResponsesSimulator {
  /** What an `openai` provider's base URL should be (`.../v1`). */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface ResponsesSimulatorOptions {
  /** Plays a scripted coding agent, whatever the model (sim-agent.ts). */
  agent?: SimAgent;
}

type Json = Record<string, unknown>;
type Item = Json & { type: string };

function sendError(res: ServerResponse, status: number, type: string, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '2' } : {}) });
  res.end(JSON.stringify({ error: { message, type, code, param: null } }));
}

let agentTurns = 0;

/** The scripted agent's answer (sim-agent.ts), or null when the request offers none of its tools. */
function agentOutput(agent: SimAgent, body: Json, input: Item[], tools: Json[]): Item[] | null {
  const call = agentToolCall(agent, tools.map((t) => String(t.name)), body);
  if (!call) return null;
  const id = `${++agentTurns}`.padStart(4, '0');
  if (input.at(-1)?.type === 'function_call_output') {
    return [{ type: 'message', id: `msg_sim_agent_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: agent.answer, annotations: [] }] }];
  }
  return [{ type: 'function_call', id: `fc_sim_agent_${id}`, call_id: `call_sim_agent_${id}`, name: call.name, arguments: JSON.stringify(call.input), status: 'completed' }];
}

/** The output items of the answer to `body`. */
function outputFor(body: Json, agent: SimAgent | undefined): Item[] {
  const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]).filter((t) => t.type === 'function') : [];
  const scripted = agent && agentOutput(agent, body, input, tools);
  if (scripted) return scripted;
  if (body.model === 'sim-tool' && tools.length > 0 && input.at(-1)?.type !== 'function_call_output') {
    return [{ type: 'function_call', id: 'fc_sim_1', call_id: 'call_sim_1', name: String(tools[0]!.name), arguments: '{"city":"Paris"}', status: 'completed' }];
  }
  const text = body.model === 'sim-tool' ? RESPONSES_TOOL_ANSWER : RESPONSES_REPLY;
  return [{ type: 'message', id: 'msg_sim_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }];
}

let answers = 0;

/** A new response id per answer, as OpenAI's are unique. */
const responseId = () => `resp_sim_${String(++answers).padStart(4, '0')}`;

function responseObject(body: Json, status: string, output: Item[], usage: Json | null, id: string): Json {
  return {
    id, object: 'response', created_at: 1_763_900_000, status, model: body.model, output, store: body.store !== false,
    previous_response_id: body.previous_response_id ?? null,
    parallel_tool_calls: true, tool_choice: 'auto', tools: body.tools ?? [], temperature: 1, top_p: 1, error: null,
    incomplete_details: null, instructions: body.instructions ?? null, metadata: {}, usage,
  };
}

/** The events of one streamed answer, in the order the API sends them. */
function streamEvents(body: Json, output: Item[], id: string): Json[] {
  const events: Json[] = [
    { type: 'response.created', response: responseObject(body, 'in_progress', [], null, id) },
    { type: 'response.in_progress', response: responseObject(body, 'in_progress', [], null, id) },
  ];
  output.forEach((item, outputIndex) => {
    if (item.type === 'function_call') {
      events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, arguments: '', status: 'in_progress' } });
      const args = String(item.arguments);
      for (const delta of [args.slice(0, 5), args.slice(5)]) events.push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: outputIndex, delta });
      events.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: outputIndex, arguments: args });
    } else {
      const text = String((item.content as Json[])[0]!.text);
      const pieces = text === RESPONSES_REPLY ? RESPONSES_PIECES : [text];
      events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, content: [], status: 'in_progress' } });
      events.push({ type: 'response.content_part.added', item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const delta of pieces) events.push({ type: 'response.output_text.delta', item_id: item.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
      events.push({ type: 'response.output_text.done', item_id: item.id, output_index: outputIndex, content_index: 0, text, logprobs: [] });
      events.push({ type: 'response.content_part.done', item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    }
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  events.push({ type: 'response.completed', response: responseObject(body, 'completed', output, RESPONSES_USAGE, id) });
  return events;
}

async function stream(res: ServerResponse, body: Json, agent: SimAgent | undefined) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const id = responseId();
  let events = streamEvents(body, outputFor(body, agent), id);
  if (body.model === 'sim-failed') {
    const failed = responseObject(body, 'failed', [], null, id);
    failed.error = { code: 'server_error', message: 'The model failed.' };
    events = [...events.slice(0, 5), { type: 'response.failed', response: failed }];
  }
  events.forEach((event, i) => res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`));
  res.end();
}

async function handle(req: IncomingMessage, res: ServerResponse, body: Json | null, agent: SimAgent | undefined) {
  if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return sendError(res, 401, 'invalid_request_error', 'invalid_api_key', 'Missing bearer authentication.');
  return answerResponses(res, body, agent);
}

/**
 * Answers an authenticated `POST /responses` body as this simulator does (also used by the Azure
 * simulator, whose Responses API is OpenAI's behind another path and header).
 */
export async function answerResponses(res: ServerResponse, body: Json | null, agent?: SimAgent): Promise<void> {
  if (!body || typeof body.model !== 'string' || body.input === undefined) return sendError(res, 400, 'invalid_request_error', 'missing_required_parameter', 'Missing required parameter: \'model\' or \'input\'.');
  if (body.model === 'sim-429') return sendError(res, 429, 'requests', 'rate_limit_exceeded', 'Rate limit reached for requests.');
  if (body.stream === true) return stream(res, body, agent);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(responseObject(body, 'completed', outputFor(body, agent), RESPONSES_USAGE, responseId())));
}

export async function startResponsesSimulator(options: ResponsesSimulatorOptions = {}): Promise<ResponsesSimulator> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    requests.push(request);
    if (req.method === 'POST' && request.path === '/v1/responses') return handle(req, res, request.body, options.agent);
    sendError(res, 404, 'invalid_request_error', 'not_found', `Unknown path ${request.path}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl: `${origin}/v1`, requests, close: () => closeServer(server) };
}
