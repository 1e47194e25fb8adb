/** A fresh temporary directory per test file, removed at exit. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// One exit listener for all of a process's directories: a listener each made files with more than
// ten of them trip Node's "possible EventEmitter memory leak" warning.
const dirs: string[] = [];

export function tempDir(prefix = 'tollgate-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (dirs.length === 0) process.once('exit', () => {
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });
  dirs.push(dir);
  return dir;
}
