// Test support: waits for what a server does in the background (a delivery recorded, a log line written), by polling.
// The bound is a hang detector, not a timing check: generous enough for a loaded machine, well inside the 600 s test timeout.

/** How long a wait may take before the thing waited for is taken to have hung. */
export const HANG_MS = 180_000;

/** Polls `probe` every `everyMs` until `done` holds of its value, which it returns; throws after `hangMs`, saying what it saw last. */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  { everyMs = 50, hangMs = HANG_MS }: { everyMs?: number; hangMs?: number } = {},
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() - started > hangMs) {
      throw new Error(`${what}: still not so after ${hangMs} ms, taken for a hang (not a timing check); last seen: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
