/**
 * Holds a child process at its start until the test lets all of them go at once, for races between
 * processes whose spawns would otherwise be hundreds of ms apart. Loaded with `node --import` (through
 * NODE_OPTIONS) before the program: it writes `<TOLLGATE_TEST_BARRIER>.<pid>` to say it is ready, then
 * waits until the file `TOLLGATE_TEST_BARRIER` exists. `runCliTogether` (cli.ts) drives it.
 */
import { existsSync, writeFileSync } from 'node:fs';

const gate = process.env.TOLLGATE_TEST_BARRIER;
if (gate) {
  // The program's own children (none today) must not wait for a gate that was opened long ago.
  delete process.env.TOLLGATE_TEST_BARRIER;
  writeFileSync(`${gate}.${process.pid}`, '');
  await new Promise((resolve) => {
    const poll = setInterval(() => {
      if (!existsSync(gate)) return;
      clearInterval(poll);
      resolve(undefined);
    }, 2);
  });
}
