/**
 * The server log: one JSON object per line on stderr. Callers pass structured fields; nothing here
 * knows about secrets, so callers MUST NOT pass keys, credentials or request bodies.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Log {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function describe(value: unknown): unknown {
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack };
    if (value.cause !== undefined) out.cause = describe(value.cause);
    return out;
  }
  return value;
}

/** Creates a log writing at `level` and above to `write` (stderr by default). */
export function createLog(level: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Log {
  const min = rank[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] < min) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg };
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = describe(v);
    write(JSON.stringify(entry) + '\n');
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}
