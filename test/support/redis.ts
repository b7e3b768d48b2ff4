// Test support: is Redis here (skip plainly if not, fail in CI), and a private redis-server that a test may stop and restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { trackChild } from './child-processes.ts';
import { HANG_MS } from './eventually.ts';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function ping(url: string): Promise<void> {
  // Generous: on a loaded machine a slow connect must not read as "no Redis here" (a skip, or a failure in CI).
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 10_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/** Undefined when Redis answers; otherwise why the tests skip. In CI a missing Redis is a failure, never a skip. */
export async function redisSkipReason(): Promise<string | undefined> {
  try {
    await ping(TEST_REDIS_URL);
    return undefined;
  } catch (error) {
    const reason = `Redis is not reachable at ${TEST_REDIS_URL} (${(error as Error).message}); start it (see docs/deploy.md) to run these tests`;
    if (process.env.CI) throw new Error(`${reason}. CI must run them.`);
    return reason;
  }
}

/** A key prefix of its own per test, so tests sharing one Redis never see each other's counters. */
export function uniqueKeyPrefix(): string {
  return `account-api-test:${randomBytes(6).toString('hex')}:`;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface PrivateRedis {
  readonly url: string;
  start(): Promise<void>;
  /** Stops the engine the way a restart does (SIGTERM), and waits for it to go. */
  stop(): Promise<void>;
  cleanup(): Promise<void>;
}

/** A redis-server of the test's own on a free port, so stopping it disturbs no other test. */
export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'account-api-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const waitUntilUp = async () => {
    // The bound is a hang detector, not a timing check: a loaded machine may take long to start redis-server.
    const startedAt = Date.now();
    while (Date.now() - startedAt < HANG_MS) {
      try {
        await ping(url);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    throw new Error(`private redis-server on port ${port} did not come up in ${HANG_MS} ms`);
  };
  const handle: PrivateRedis = {
    url,
    async start() {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
      child = trackChild(spawn('redis-server', args, { stdio: 'ignore' }), ['redis-server', ...args], 'file');
      await waitUntilUp();
    },
    async stop() {
      const running = child;
      child = null;
      if (running === null || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    },
    async cleanup() {
      await handle.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await handle.start();
  return handle;
}
