// Closing a connection without waiting forever: the clean close (Redis QUIT, PostgreSQL Terminate) gets a short grace, then the sockets are cut.
// Guarded by: test/unit/store/bounded-close.test.ts (a close that never ends), test/e2e/cli-shutdown.test.ts (the CLI exits).

/**
 * Long enough for a healthy engine on a loaded machine to answer a QUIT (milliseconds), short enough that a command that
 * has done its work exits promptly when the engine stopped answering (a paused or cut-off Redis, a silent network).
 */
export const CLOSE_GRACE_MS = 2000;

/**
 * Runs `close`; if it has not settled within `graceMs` (or it failed), calls `force` and returns without waiting for it
 * further. Resolves true when the clean close finished in time. Never rejects.
 */
export async function closeWithin(close: () => Promise<unknown>, force: () => void, graceMs: number = CLOSE_GRACE_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), graceMs);
  });
  let closed: Promise<boolean>;
  try {
    closed = close().then(
      () => true,
      () => false,
    );
  } catch {
    closed = Promise.resolve(false);
  }
  const clean = await Promise.race([closed, overdue]);
  clearTimeout(timer);
  if (!clean) force();
  return clean;
}
