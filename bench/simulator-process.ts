/**
 * The OpenAI simulator in its own process for the benchmark, so it does not share a CPU with the load
 * generator. It keeps no record of the requests it serves, so its heap stays flat through a run.
 */
import { startOpenAISimulator } from '../test/helpers/openai-simulator.ts';

const sim = await startOpenAISimulator({ streamContentChunks: Number(process.env.SIM_CONTENT_CHUNKS ?? 22), record: false });
process.stdout.write(`${sim.baseUrl}\n`);
process.on('SIGTERM', () => void sim.close().then(() => process.exit(0)));
