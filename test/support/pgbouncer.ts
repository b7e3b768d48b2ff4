// Test support: a PgBouncer of the test's own (Debian's pgbouncer, transaction pooling) in front of the test PostgreSQL.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import pg from 'pg';
import { trackChild } from './child-processes.ts';
import { HANG_MS } from './eventually.ts';
import { ADMIN_URL } from './postgres.ts';
import { freePort } from './redis.ts';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path));

export interface PgBouncer {
  readonly port: number;
  /** The test PostgreSQL's `database` through this PgBouncer, as the admin URL's role. */
  url(database: string): string;
  /** Runs one command on PgBouncer's admin console (SHOW STATS, SHOW POOLS...), simple protocol only. */
  console(command: string): Promise<pg.QueryResult>;
  /** Everything PgBouncer logged so far, for a failing assertion's message. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and role (PgBouncer's default_pool_size); the documented file's unless told. */
  readonly poolSize?: number;
  /** Where the databases are (host and port); the test PostgreSQL's unless told (a private one a test may restart). */
  readonly server?: { readonly host: string; readonly port: number; readonly user: string };
}

/** The settings of docs/deploy.md's `pgbouncer.ini`, in its order: what every test PgBouncer runs with. */
export function documentedPgBouncerSettings(): ReadonlyMap<string, string> {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/deploy.md'), 'utf8');
  const block = /A minimal `pgbouncer\.ini`[\s\S]*?```ini\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error("docs/deploy.md has no ```ini block after 'A minimal `pgbouncer.ini`'");
  const section = block.split(/^\[pgbouncer\]$/m)[1];
  if (section === undefined) throw new Error("docs/deploy.md's pgbouncer.ini has no [pgbouncer] section");
  return new Map(
    section
      .split('\n')
      .map((line) => /^\s*([a-z_]+)\s*=\s*(.*?)\s*$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
}

/**
 * What this machine changes in the documented file, and why: its own address and a free port, no Unix socket, no
 * passwords asked of the tests (trust), the tests' role as admin, a log of its own. Everything else is the document's.
 */
function localSettings(port: number, dir: string, user: string, poolSize: number | undefined): Record<string, string> {
  return {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'users.txt'),
    admin_users: user,
    logfile: join(dir, 'pgbouncer.log'),
    ...(poolSize === undefined ? {} : { default_pool_size: String(poolSize) }),
  };
}

/**
 * Undefined when pgbouncer is installed here; otherwise why the tests that need it are skipped. In CI nothing may be
 * skipped silently, so there it throws instead (.ci/run installs it).
 */
export function pgbouncerSkipReason(): string | undefined {
  if (PGBOUNCER !== undefined) return undefined;
  const reason = 'pgbouncer is not installed (Debian: apt-get install pgbouncer)';
  if (process.env.CI) throw new Error(`${reason}; CI must run the tests through PgBouncer.`);
  return reason;
}

/** PgBouncer refuses to run as root: it then runs as `postgres` (-u), as the private PostgreSQL does. */
function runAsUser(dir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  return 'postgres';
}

function quoted(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

function accepting(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/**
 * Starts PgBouncer with docs/deploy.md's settings (transaction pooling) on a free port, every database forwarded to the test
 * PostgreSQL (or `options.server`).
 */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const admin = new URL(ADMIN_URL);
  const user = decodeURIComponent(admin.username) || 'root';
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'account-api-pgbouncer-'));
  // trust: PgBouncer asks the client for nothing, but logs in to PostgreSQL with the password listed here (if any).
  const users = [`${quoted(user)} ${quoted(decodeURIComponent(admin.password))}`];
  if (options.server !== undefined) users.push(`${quoted(options.server.user)} ""`);
  writeFileSync(join(dir, 'users.txt'), `${users.join('\n')}\n`);
  const server = options.server ?? { host: admin.hostname.replace(/^\[|\]$/g, ''), port: Number(admin.port || '5432'), user };
  const settings = { ...Object.fromEntries(documentedPgBouncerSettings()), ...localSettings(port, dir, user, options.poolSize) };
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.host} port=${server.port}`,
      '[pgbouncer]',
      ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
      '',
    ].join('\n'),
  );
  const asUser = runAsUser(dir);
  const args = [...(asUser === undefined ? [] : ['-u', asUser]), join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = trackChild(spawn(PGBOUNCER!, args, { stdio: ['ignore', 'ignore', 'pipe'] }), [PGBOUNCER!, ...args], 'file');
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log = () => {
    try {
      return readFileSync(join(dir, 'pgbouncer.log'), 'utf8') + stderr;
    } catch {
      return stderr;
    }
  };
  const deadline = Date.now() + HANG_MS;
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start listening on 127.0.0.1:${port}:\n${log()}`);
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  const url = (database: string) => {
    const through = new URL(ADMIN_URL);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    through.pathname = `/${database}`;
    return through.toString();
  };
  return {
    port,
    url,
    log,
    console: async (command) => {
      const client = new pg.Client({ connectionString: url('pgbouncer') });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return await client.query(command);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
