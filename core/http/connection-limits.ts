/**
 * Limits on client connections, so slow or idle clients cannot exhaust the process's sockets and file
 * descriptors (issue 14, item 3; issue 39, item 4): caps on open connections in all and per remote
 * address, and a lower cap per address on *idle* ones, and the file-descriptor limit read at start so
 * an operator learns when the connection cap exceeds it. Node cannot raise its own limit (no
 * setrlimit); the service manager does (`LimitNOFILE=` in systemd, `ulimit -n` in a shell,
 * `--ulimit nofile=` in Docker).
 *
 * A connection is idle while it serves no request: from its accept until its first request's head is
 * complete (a slow or stalled client), and between two requests of a kept-alive connection. Idle
 * connections cost a client nothing, no key needed, so a cap that refused newcomers would let a few
 * addresses lock everyone out. A cap reached with idle connections therefore closes the oldest idle
 * one to admit the newcomer, whose well-formed request (`/healthz`, a known key) is then read (nginx
 * likewise closes idle keep-alive connections when it runs out of connections). Spared
 * is a connection from which nothing was read yet, for `SILENT_GRACE_MS` after its accept: a burst
 * of new connections from one client (a pool starting up) can be accepted before any of their heads
 * is read, and they must not push each other out. The newcomer is refused only when no connection
 * under the cap may be closed (all serve a request, or are spared).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** The caps, in connections (manifest `server`). */
export interface ConnectionCaps {
  /** Open connections in all. */
  maxConnections: number;
  /** Open connections per remote address. */
  maxConnectionsPerAddress: number;
  /** Idle connections per remote address (see the file's comment). */
  maxIdleConnectionsPerAddress: number;
}

/** How long a connection that has sent nothing yet cannot be closed to make room, in ms. */
export const SILENT_GRACE_MS = 1_000;
/** Idle connections looked at, oldest first, for one that may be closed. */
const EVICTION_SCAN = 64;

/** One accepted connection while it is open. */
interface Tracked {
  readonly socket: Socket;
  readonly address: string;
  /** Requests under way on it (pipelined requests overlap); idle at 0. */
  active: number;
  /** `performance.now()` when it last became idle (accepted, or its last answer ended). */
  idleSinceMs: number;
  /** Counted out: closed, or closed by a cap (its 'close' event comes a tick later). */
  gone: boolean;
}

/** The connections of one remote address. */
interface AddressConnections {
  open: number;
  /** Its idle connections, oldest (longest idle) first: a Set iterates in insertion order. */
  readonly idle: Set<Tracked>;
}

/**
 * The longest idle member of `idle` that may be closed, or undefined: one that has sent bytes (a
 * partial head, or a finished request), or that has been idle for `SILENT_GRACE_MS`. `idle` is in
 * idle-since order, so past a young first member only the bytes tell; the scan is bounded so a flood
 * of silent connections costs O(1) per accept.
 */
function oldestEvictable(idle: Set<Tracked>, nowMs: number): Tracked | undefined {
  let looked = 0;
  for (const conn of idle) {
    if (conn.socket.bytesRead > 0 || nowMs - conn.idleSinceMs >= SILENT_GRACE_MS) return conn;
    if (++looked === EVICTION_SCAN) return undefined;
  }
  return undefined;
}

/**
 * Enforces `caps` on `server`'s client connections, as soon as each is accepted (before a byte is
 * read): over a cap, the oldest idle connection under it that may be closed (`oldestEvictable`; of
 * the address, or of the whole server for `maxConnections`) is closed to make room; with none, the
 * new connection is closed (over the idle cap alone, it is let in). Replaces
 * `server.maxConnections`, which can only refuse. Returns the counts of connections refused and of
 * idle ones closed so far.
 */
export function limitConnections(server: Server, caps: ConnectionCaps): { refused(): number; evicted(): number } {
  const bySocket = new WeakMap<Socket, Tracked>();
  const byAddress = new Map<string, AddressConnections>();
  /** Every idle connection, oldest first. */
  const idle = new Set<Tracked>();
  let open = 0;
  let refused = 0;
  let evicted = 0;

  const forget = (conn: Tracked) => {
    if (conn.gone) return;
    conn.gone = true;
    open--;
    idle.delete(conn);
    const of = byAddress.get(conn.address)!;
    of.idle.delete(conn);
    if (--of.open === 0) byAddress.delete(conn.address);
  };
  /** Closes `conn` to make room; false when there is none. */
  const evict = (conn: Tracked | undefined): boolean => {
    if (!conn) return false;
    forget(conn);
    evicted++;
    conn.socket.destroy();
    return true;
  };
  const toIdle = (conn: Tracked, nowMs: number) => {
    conn.idleSinceMs = nowMs;
    idle.add(conn);
    byAddress.get(conn.address)!.idle.add(conn);
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const nowMs = performance.now();
    const mine = byAddress.get(address);
    // The idle cap is kept where it can be: over it with only spared connections, the newcomer is let in.
    if (mine && mine.idle.size >= caps.maxIdleConnectionsPerAddress) evict(oldestEvictable(mine.idle, nowMs));
    const roomMade = (!mine || mine.open < caps.maxConnectionsPerAddress || evict(oldestEvictable(mine.idle, nowMs)))
      && (open < caps.maxConnections || evict(oldestEvictable(idle, nowMs)));
    if (!roomMade) {
      refused++;
      socket.destroy();
      return;
    }
    let of = byAddress.get(address);
    if (!of) byAddress.set(address, (of = { open: 0, idle: new Set() }));
    of.open++;
    open++;
    const conn: Tracked = { socket, address, active: 0, idleSinceMs: nowMs, gone: false };
    bySocket.set(socket, conn);
    toIdle(conn, nowMs);
    socket.once('close', () => forget(conn));
  });

  server.on('request', (req, res) => {
    const conn = bySocket.get(req.socket);
    if (!conn || conn.gone) return;
    if (conn.active++ === 0) {
      idle.delete(conn);
      byAddress.get(conn.address)!.idle.delete(conn);
    }
    res.once('close', () => {
      if (!conn.gone && --conn.active === 0 && !conn.socket.destroyed) toIdle(conn, performance.now());
    });
  });

  return { refused: () => refused, evicted: () => evicted };
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
