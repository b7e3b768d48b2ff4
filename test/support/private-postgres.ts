// Test support: a PostgreSQL cluster of the test's own (initdb on a free port), so a test may stop and restart the engine.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HANG_MS } from './eventually.ts';
import { freePort } from './redis.ts';

export interface PrivatePostgres {
  readonly url: string;
  start(): void;
  /** A fast shutdown, as an operator's restart does: sessions are cut, new connections refused. */
  stop(): void;
  cleanup(): void;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => join(root, version, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
}

/** Undefined when a private cluster can be made here (PostgreSQL binaries and root to run them as `postgres`). */
export function privatePostgresSkipReason(): string | undefined {
  const reason =
    binDir() === undefined
      ? 'PostgreSQL server binaries (initdb, pg_ctl) are not installed'
      : process.getuid?.() !== 0
        ? 'a private PostgreSQL cluster is started as the postgres user, which needs root'
        : undefined;
  if (reason !== undefined && process.env.CI) throw new Error(`${reason}; CI must run the engine-restart tests.`);
  return reason;
}

function asPostgres(command: string): void {
  execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', command], { stdio: 'pipe' });
}

export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'account-api-pg-'));
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const data = join(dir, 'data');
  asPostgres(`${bin}/initdb -D ${data} -A trust -U postgres --no-sync > /dev/null`);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const handle: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // -t: pg_ctl's own wait (60 s by default) raised to a hang detector, so a loaded machine's slow start is not a failure.
    start: () => asPostgres(`${bin}/pg_ctl -D ${data} -o '${options}' -l ${dir}/log -w -t ${HANG_MS / 1000} start > /dev/null`),
    stop: () => asPostgres(`${bin}/pg_ctl -D ${data} -m fast -w -t ${HANG_MS / 1000} stop > /dev/null`),
    cleanup: () => {
      try {
        handle.stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  handle.start();
  return handle;
}
