/**
 * A node:test reporter that prints, when the run ends, each test file's time, slowest first: the sum
 * of the durations of its top-level tests and suites (its `before`/`after` hooks at file level are not
 * counted). Which files CI's time goes to. `node test/run-tests.js` adds it when TEST_FILE_TIMES
 * names a destination file.
 */
import { relative } from 'node:path';

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0 || !event.data.file) continue;
    const file = relative(process.cwd(), event.data.file);
    files.set(file, (files.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  const rows = [...files].sort((a, b) => b[1] - a[1]);
  const totalS = rows.reduce((sum, [, ms]) => sum + ms, 0) / 1000;
  yield `# file times: the sum of each file's top-level tests, ${rows.length} files, ${totalS.toFixed(0)} s in all\n`;
  for (const [file, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${file}\n`;
}
