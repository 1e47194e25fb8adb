/**
 * Limits on client connections, so slow or idle clients cannot exhaust the process's sockets and file
 * descriptors (issue 14, item 3): a cap on open connections per remote address (node:http has only a
 * total cap, `server.maxConnections`), and the file-descriptor limit read at start so an operator
 * learns when the connection cap exceeds it. Node cannot raise its own limit (no setrlimit); the
 * service manager does (`LimitNOFILE=` in systemd, `ulimit -n` in a shell, `--ulimit nofile=` in Docker).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes every connection beyond `maxPerAddress` open ones from the same remote address, as soon as
 * it is accepted (before a byte is read). Returns the count of connections closed so far.
 */
export function capConnectionsPerAddress(server: Server, maxPerAddress: number): { refused(): number } {
  const open = new Map<string, number>();
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxPerAddress) {
      refused++;
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return { refused: () => refused };
}

/** The soft and hard limits on open files, from `/proc/self/limits` (Linux); null elsewhere or when unlimited. */
export function openFilesLimit(limitsText?: string): { soft: number; hard: number } | null {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return null;
    }
  }
  const match = /^Max open files\s+(\d+)\s+(\d+)/m.exec(text);
  return match ? { soft: Number(match[1]), hard: Number(match[2]) } : null;
}

/**
 * A warning when `maxConnections` client sockets, plus the upstream pools and the database, would not
 * fit under the soft file-descriptor limit; null when they fit or the limit is unknown. Each client
 * connection may hold an upstream socket too, hence the factor 2.
 */
export function fileLimitWarning(maxConnections: number, limit: { soft: number; hard: number } | null): string | null {
  if (!limit) return null;
  const needed = maxConnections * 2 + 64;
  if (needed <= limit.soft) return null;
  return `server.maxConnections is ${maxConnections}, but the open-file limit is ${limit.soft} (hard ${limit.hard}); `
    + `a full gateway needs about ${needed} descriptors (a client and an upstream socket per connection). `
    + `Raise the limit where the gateway is started (systemd LimitNOFILE=, ulimit -n, docker --ulimit nofile=) or lower server.maxConnections.`;
}
