/**
 * A node:test reporter that prints, when the run ends, each test file's wall-clock span (its first
 * event to its last) and the sum of its top-level tests' durations, slowest first: which files CI's
 * time goes to. `node test/run-tests.js` adds it when TEST_FILE_TIMES names a destination file.
 */
export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    const now = Date.now();
    const entry = files.get(file) ?? { first: now, last: now, testsMs: 0 };
    entry.last = now;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) entry.testsMs += event.data.details?.duration_ms ?? 0;
    files.set(file, entry);
  }
  const rows = [...files].map(([file, e]) => ({ file, spanS: (e.last - e.first) / 1000, testsS: e.testsMs / 1000 })).sort((a, b) => b.spanS - a.spanS);
  yield `# file times (span from first to last event, sum of top-level tests), ${rows.length} files\n`;
  for (const r of rows) yield `${r.spanS.toFixed(1).padStart(7)} s ${r.testsS.toFixed(1).padStart(7)} s  ${r.file}\n`;
}
