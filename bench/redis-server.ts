// A redis-server of the bench's own on a free port: its CPU time and command counts are then the service's alone, where a
// shared Redis would count every other client's too.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './processes.ts';

export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  /** The bench's own connection, for INFO. */
  readonly client: Redis;
  stop(): Promise<void>;
}

/** Starts `redis-server` (no persistence, as a cache) and connects to it; rejects when there is none to start. */
export async function startRedis(): Promise<BenchRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'account-api-bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const failed = new Promise<never>((_, fail) => child.once('error', fail));
  const url = `redis://127.0.0.1:${port}`;
  // Retries until redis-server listens (it takes a moment to start); a few seconds at most.
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null, retryStrategy: (times) => (times > 200 ? null : 25) });
  client.on('error', () => undefined);
  const stop = async () => {
    client.disconnect();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([client.ping(), failed]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pid: child.pid!, client, stop };
}
