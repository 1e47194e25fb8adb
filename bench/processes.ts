/** Child processes for the benchmarks: spawn one and wait for its ready line; read its CPU time. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Linux USER_HZ: clock ticks per second in /proc/<pid>/stat. */
export const CLK_TCK = 100;

export interface Started {
  proc: ChildProcess;
  match: RegExpExecArray;
}

/** Spawns `command` (default: this Node with `args`) in the repository and waits for `ready` on its stdout. */
export function startProcess(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, command = process.execPath): Promise<Started> {
  const proc = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const match = ready.exec(out);
      if (match) resolve({ proc, match });
    });
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

/** User + system CPU ticks a process has used (`/proc/<pid>/stat` fields 14 and 15). */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Resident set size of a process, MB (`VmRSS` in /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** SIGTERM, then waits for the exit. */
export async function stopProcess({ proc }: Started): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}
