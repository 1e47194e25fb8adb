/**
 * Polls until `check` resolves, for what another process or connection makes true a moment later
 * (a commit heard through the change feed, a reconnect). Rethrows `check`'s last error once
 * `timeoutMs` has passed, so a failure shows what was last seen. The timeout is a liveness bound, not
 * a speed one (which a busy machine would break): generous, since only a failing test waits it out.
 */
export async function eventually(check: () => Promise<void>, { timeoutMs = 20_000, intervalMs = 20 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
