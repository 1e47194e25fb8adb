/** CLI output: `--json` for scripts, aligned tables for people; errors to stderr with exit code 1. */

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return String(value);
}

/** Prints rows as an aligned table with the given columns (header = column name). */
export function printTable<T extends object>(rows: readonly T[], columns: readonly string[]): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const valueOf = (row: T, column: string): unknown => (row as Record<string, unknown>)[column];
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(valueOf(r, c)).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd() + '\n';
  process.stdout.write(line(columns.map((c) => c.toUpperCase())));
  for (const row of rows) process.stdout.write(line(columns.map((c) => cell(valueOf(row, c)))));
}

/** Prints one record as `key: value` lines. */
export function printRecord(record: object): void {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [k, v] of Object.entries(record)) process.stdout.write(`${k.padEnd(width)}  ${cell(v)}\n`);
}

/** Reads all of stdin as text (for secrets: never from argv). */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('expected the value on standard input (e.g. `printf %s "$VALUE" | tollgate ...`)');
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8').replace(/\r?\n$/, '');
}
