/**
 * Running a real agent CLI (Claude Code, Codex) from a test: in its own process group, with a given
 * environment and working directory, no stdin, output collected, and the whole group killed after a
 * timeout or when the test file ends (`killAll`).
 */
import { spawn } from 'node:child_process';

export interface AgentRun {
  code: number | null;
  /** The signal that ended it, or `killed after N ms` when the timeout did. */
  signal: string | null;
  stdout: string;
  stderr: string;
  cwd: string;
}

const running = new Set<number>();

/** Runs `bin args` in `cwd` with exactly `env`; resolves when it exits or `timeoutMs` killed it. */
export function runAgentCli(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<AgentRun> {
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child.pid!);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.kill(-child.pid!, 'SIGKILL');
  }, timeoutMs);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data) => (stdout += data));
  child.stderr.on('data', (data) => (stderr += data));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid!);
      resolve({ code, signal: timedOut ? `killed after ${timeoutMs} ms` : signal, stdout, stderr, cwd });
    });
  });
}

/** Kills every run still going (a run cut short by a failed assertion or a cancelled test). */
export function killAll(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}
