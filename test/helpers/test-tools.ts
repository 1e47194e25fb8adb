/**
 * The tools some end-to-end tests drive but the project does not depend on (the Claude Code, Codex,
 * Gemini and opencode CLIs, a Node 24 binary, the Vercel AI SDK), as `bin/install-test-tools.js` recorded them in
 * `<TOLLGATE_TOOLS_DIR>/tools.json`. Without a tool its tests skip, unless `CI` is set: then they fail
 * (asserting `tool` is present with `missingMessage`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type TestToolId = 'claude' | 'codex' | 'gemini' | 'opencode' | 'node24' | 'aiSdk';

export interface TestTool {
  /** The executable (or, for a library, the folder whose node_modules holds it). */
  bin: string;
  version: string;
}

export const toolsDir = process.env.TOLLGATE_TOOLS_DIR || join(tmpdir(), 'tollgate-test-tools');

/** The installed tool, or null. */
export function testTool(id: TestToolId): TestTool | null {
  const manifest = join(toolsDir, 'tools.json');
  if (!existsSync(manifest)) return null;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as Partial<Record<TestToolId, TestTool>>)[id] ?? null;
}

/** What to tell whoever runs the tests without the tool. */
export function missingMessage(name: string): string {
  return `${name} is not installed in ${toolsDir}: run \`node bin/install-test-tools.js\``;
}

/** `describe`'s `skip` option: a reason when a tool is missing outside CI, else false. */
export function skipWithout(tools: ReadonlyArray<[TestTool | null, string]>): string | false {
  const missing = tools.find(([tool]) => !tool);
  return missing && !process.env.CI ? missingMessage(missing[1]) : false;
}
