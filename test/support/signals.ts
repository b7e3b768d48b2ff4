// Test support: reading a running server's JSON log lines and Prometheus metrics.
import { setTimeout as sleep } from 'node:timers/promises';
import { HANG_MS } from './eventually.ts';
import type { ServerProcess } from './server-process.ts';

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly reqId?: string;
  readonly [field: string]: unknown;
}

/** Every line the server wrote that parses as a JSON log record (typed as the caller reads them). */
export function logLines<Line extends object = LogLine>(server: ServerProcess): Line[] {
  return server.output.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Line];
    } catch {
      return [];
    }
  });
}

/**
 * The first log line `match` accepts, once the server has written it; fails after `timeoutMs`, naming `what` it waited for.
 * The bound is a hang detector, not a timing check: a loaded machine may take long to write the line.
 */
export async function waitForLog<Line extends object = LogLine>(
  server: ServerProcess,
  what: string,
  match: (line: Line) => boolean,
  timeoutMs = HANG_MS,
): Promise<Line> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const found = logLines<Line>(server).find(match);
    if (found !== undefined) return found;
    await sleep(10);
  }
  throw new Error(`no log line ${what} within ${timeoutMs} ms, taken for a hang; last lines:\n${server.output.slice(-10).join('\n')}`);
}

/**
 * Waits until the server's output has stopped growing (no new line for 100 ms, at most 5 s): log lines are written
 * asynchronously (request-log.ts), so a request's line can arrive a moment after its answer. A best effort, for checks
 * that a line is absent; a line that must be there is waited for (waitForLog, eventually), since load can delay it longer.
 */
export async function logsSettled(server: ServerProcess): Promise<void> {
  const deadline = Date.now() + 5000;
  let seen = server.output.length;
  let quietSince = Date.now();
  while (Date.now() - quietSince < 100 && Date.now() < deadline) {
    await sleep(20);
    if (server.output.length !== seen) {
      seen = server.output.length;
      quietSince = Date.now();
    }
  }
}

/** The log lines of one request, waiting until its `request completed` line has been written (HANG_MS at most: a hang detector). */
export async function linesOfRequest(server: ServerProcess, reqId: string): Promise<LogLine[]> {
  const deadline = Date.now() + HANG_MS;
  for (;;) {
    const lines = logLines(server).filter((line) => line.reqId === reqId);
    if (lines.some((line) => line.msg === 'request completed') || Date.now() > deadline) return lines;
    await sleep(20);
  }
}

/** The value of one sample in Prometheus text, matching these labels exactly (in any order); 0 when absent. */
export function sample(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = (match[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).filter((pair) => pair !== '').sort().join(',');
    if (found === wanted) return Number(match[3]);
  }
  return 0;
}
