/**
 * Sends one fuzz case with node:http (which, unlike fetch, sends any method, repeated headers, latin-1
 * header bytes, a declared length or chunks) and reads the whole answer, within a time bound.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { FuzzCase } from './cases.ts';

/** What came back for one case. */
export interface Outcome {
  /** 0 when no response head arrived. */
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as received (at most `MAX_KEPT_BYTES`). */
  body: Buffer;
  durationMs: number;
  /** `timeout` (no complete answer within the bound), or the socket error's code, when the exchange failed. */
  failure: string | null;
}

const MAX_KEPT_BYTES = 8 * 1024 * 1024;

/** Sends `c` to `origin` and resolves (never rejects) with its outcome within `timeoutMs`. */
export function send(origin: string, c: FuzzCase, agent: Agent, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  const url = new URL(origin);
  return new Promise((resolve) => {
    let settled = false;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    const parts: Buffer[] = [];
    let kept = 0;
    const finish = (failure: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, headers, body: Buffer.concat(parts), durationMs: performance.now() - started, failure });
    };
    const headersOut: Record<string, string | string[]> = { ...c.headers };
    if (c.body && !c.chunked) headersOut['content-length'] = String(c.body.length);
    let req: ReturnType<typeof request>;
    try {
      req = request({ host: url.hostname, port: url.port, method: c.method, path: c.url, headers: headersOut, agent });
    } catch (err) {
      // The client refused to build it (an invalid header byte): nothing reached the gateway.
      resolve({ status: -1, headers: {}, body: Buffer.alloc(0), durationMs: 0, failure: `client refused: ${(err as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      finish('timeout');
    }, timeoutMs);
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      headers = res.headers;
      res.on('data', (part: Buffer) => {
        if (kept < MAX_KEPT_BYTES) parts.push(part);
        kept += part.length;
      });
      res.on('end', () => finish(null));
      res.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
      res.on('close', () => finish(res.complete ? null : 'aborted'));
    });
    // A gateway that answers before reading the body (401, 413) closes the socket under a writing client.
    // Once the answer's head is in, the answer decides the outcome (its end or its cut).
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (status === 0) finish(err.code ?? err.message);
    });
    if (c.body && c.chunked) {
      const half = Math.floor(c.body.length / 2);
      req.write(c.body.subarray(0, half));
      req.end(c.body.subarray(half));
    } else req.end(c.body ?? undefined);
  });
}

/** What came back on a half-open connection (`sendHalfOpen`). */
export interface HalfOpenOutcome {
  /** The bytes the gateway sent (at most `MAX_KEPT_BYTES`). */
  received: Buffer;
  /** The gateway closed the connection (not only its sending side) within the plan's deadline. */
  closed: boolean;
  /** `GET /healthz` on another connection while this one was open: its status; 0 when not answered within the deadline. */
  healthzStatus: number;
}

const DRIP_EVERY_MS = 250;

/**
 * Opens a raw connection to `origin`, sends `plan.head`, then `plan.drip` every 250 ms, never
 * finishing the request and never closing (its side stays open after the gateway's end:
 * `allowHalfOpen`). A drip written after the gateway destroyed its socket is answered with a reset,
 * which is how the close is seen here; a gateway that only ended its side keeps taking the drip.
 * Resolves (never rejects) when the connection closed or `plan.deadlineMs` passed.
 */
export function sendHalfOpen(origin: string, plan: NonNullable<FuzzCase['halfOpen']>): Promise<HalfOpenOutcome> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let kept = 0;
    let healthzStatus = 0;
    let healthzDone: Promise<void> = Promise.resolve();
    const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
    const finish = (closed: boolean) => {
      clearInterval(drip);
      clearTimeout(deadline);
      socket.destroy();
      void healthzDone.then(() => resolve({ received: Buffer.concat(parts), closed, healthzStatus }));
    };
    socket.on('data', (part: Buffer) => {
      if (kept < MAX_KEPT_BYTES) parts.push(part);
      kept += part.length;
    });
    socket.on('error', () => {});
    socket.once('close', () => finish(true));
    socket.once('connect', () => {
      socket.write(plan.head);
      healthzDone = new Promise((done) => {
        const req = request({ host: url.hostname, port: url.port, path: '/healthz', agent: false, timeout: plan.deadlineMs }, (res) => {
          healthzStatus = res.statusCode ?? 0;
          res.resume();
          res.on('end', () => done());
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => done());
        req.end();
      });
    });
    const drip = setInterval(() => {
      if (socket.writable) socket.write(plan.drip);
    }, DRIP_EVERY_MS);
    const deadline = setTimeout(() => finish(false), plan.deadlineMs);
  });
}
