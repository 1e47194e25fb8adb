/**
 * The package's root folder (where `package.json`, `schema.sql` and `admin-static/` are), found from a
 * module's own URL: one level up from the `dist/` bundle, two or three from a source file under `core/`.
 * Walking up to the nearest `schema.sql` keeps every caller right wherever its file sits in the tree.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding `schema.sql` above `moduleUrl` (a module's `import.meta.url`); throws when none does. */
export function packageRoot(moduleUrl: string): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'schema.sql'))) return dir;
    if (dirname(dir) === dir) throw new Error(`schema.sql not found above ${start}`);
  }
}
