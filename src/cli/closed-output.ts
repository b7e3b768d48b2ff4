// When whoever reads the command's output goes away (`account-api audit | head -1`): stop at once and quietly, as git does.

/** The status a shell gives a command that SIGPIPE ended (128 + 13), which git and grep end with: `set -o pipefail` sees it. */
export const CLOSED_OUTPUT_STATUS = 141;

/** An error a write to a stream reports (EPIPE when the reading end of its pipe is closed). */
interface WriteError extends Error {
  readonly code?: string;
}

/**
 * Node ignores SIGPIPE, so a write to a closed pipe fails with EPIPE instead, reported as an 'error' event that would end the
 * process with a stack trace. `whenClosed` runs once, on the first EPIPE of either stream; a command exits there, writing nothing
 * more (not even to stderr), so a long listing stops rather than keep working for no reader. Any other write error is left as it was.
 */
export function onClosedOutput(streams: readonly NodeJS.EventEmitter[], whenClosed: () => void): void {
  let told = false;
  for (const stream of streams) {
    stream.on('error', (error: WriteError) => {
      if (error.code !== 'EPIPE') throw error;
      if (told) return;
      told = true;
      whenClosed();
    });
  }
}
