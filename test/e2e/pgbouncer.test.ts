// Every connection through PgBouncer in transaction pooling mode: the service must be told (PG_POOLER=transaction), its
// statement timeout still fires, and the suites of the API, admin API, webhooks, idempotency and revocation across two
// instances pass through it unchanged (rerun here with their databases behind this PgBouncer: support/through-pooler.ts; all
// of them with PGBOUNCER_RERUNS=all, `npm run test:deployments`; the first alone in `npm test`).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { call, failureMessage } from '../support/http.ts';
import { startPgBouncer, pgbouncerSkipReason, type PgBouncer } from '../support/pgbouncer.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason } from '../support/redis.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, expectStartFailure, REPO_ROOT, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const skip = (await postgresSkipReason()) ?? pgbouncerSkipReason() ?? (await redisSkipReason());
const { after, before, describe, test } = requiring(skip);

/**
 * The suites rerun through PgBouncer, and which of their cases (the PostgreSQL ones: the SQLite ones never meet it). `npm test`
 * reruns the first, its short form; `npm run test:deployments` (PGBOUNCER_RERUNS=all, as .ci/run runs it) reruns them all.
 */
const ALL_SUITES: readonly { readonly file: string; readonly covers: string; readonly only?: string }[] = [
  { file: 'test/e2e/scale-out.test.ts', covers: 'the API and revocation across two instances' },
  { file: 'test/e2e/cached-credentials.instances.test.ts', covers: 'credential changes at the next request on every instance' },
  { file: 'test/e2e/admin/keys.instances.test.ts', covers: 'the admin API across two instances' },
  { file: 'test/e2e/admin/admin-auth.instances.test.ts', covers: 'admin tokens and their shared failure budget across two instances' },
  { file: 'test/e2e/admin/idempotency.instances.test.ts', covers: "the admin API's Idempotency-Key across two instances" },
  { file: 'test/e2e/idempotency.test.ts', covers: 'Idempotency-Key, on one and on two instances', only: 'PostgreSQL' },
  { file: 'test/e2e/webhooks.test.ts', covers: 'webhooks delivered by two instances', only: 'PostgreSQL' },
];
const SUITES = process.env.PGBOUNCER_RERUNS === 'all' ? ALL_SUITES : ALL_SUITES.slice(0, 1);

interface SuiteRun {
  readonly code: number | null;
  readonly output: string;
  readonly counts: Readonly<Record<'tests' | 'pass' | 'fail' | 'skipped' | 'todo' | 'cancelled', number>>;
}

function withoutKey(env: NodeJS.ProcessEnv, key: string): NodeJS.ProcessEnv {
  const { [key]: _dropped, ...rest } = env;
  return rest;
}

/** `node --test FILE` with its databases behind `bouncer`, as its own process (as `npm test` runs every file). */
function runSuite(bouncer: PgBouncer, file: string, only: string | undefined): Promise<SuiteRun> {
  const args = ['--test', '--test-reporter=tap', ...(only === undefined ? [] : ['--test-name-pattern', only]), join(REPO_ROOT, file)];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      // Without this runner's NODE_TEST_CONTEXT, or the child would report to it instead of running the file.
      env: { ...withoutKey(process.env, 'NODE_TEST_CONTEXT'), TEST_THROUGH_PGBOUNCER_PORT: String(bouncer.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN);
      done({
        code,
        output,
        counts: { tests: count('tests'), pass: count('pass'), fail: count('fail'), skipped: count('skipped'), todo: count('todo'), cancelled: count('cancelled') },
      });
    });
  });
}

/** Transactions PgBouncer has forwarded for the test databases so far (its admin console's SHOW STATS). */
async function transactionsForwarded(bouncer: PgBouncer): Promise<number> {
  const { rows } = await bouncer.console('SHOW STATS');
  return rows.filter((row) => String(row.database).startsWith('aapi_test_')).reduce((sum, row) => sum + Number(row.total_xact_count), 0);
}

describe('through PgBouncer in transaction pooling mode', () => {
  let bouncer: PgBouncer;

  before(async () => {
    bouncer = await startPgBouncer();
  });

  after(async () => {
    await bouncer?.stop();
  });

  describe('one service behind it', () => {
    let database: TestDatabase;
    let workspace: Workspace;
    let alice: Account;
    let server: ServerProcess;
    let holder: pg.Client;

    before(async () => {
      database = await createTestDatabase();
      workspace = createWorkspace({ DATABASE_URL: bouncer.url(database.name), PG_POOLER: 'transaction', PG_STATEMENT_TIMEOUT_MS: '1000', CREDENTIAL_CACHE_SIZE: '0' });
      // Directly, not through PgBouncer: a session the service knows nothing of, holding locks.
      holder = new pg.Client({ connectionString: database.url });
      holder.on('error', () => undefined);
      await holder.connect();
    });

    after(async () => {
      await server?.stop();
      await holder?.end().catch(() => undefined);
      workspace?.cleanup();
      await database?.drop();
    });

    test('without PG_POOLER=transaction it refuses to start, and says what to set', async () => {
      const output = await expectStartFailure(workspace, [], { PG_POOLER: 'none' });
      assert.match(output, /unsupported startup parameter: statement_timeout/, output);
      assert.match(output, /Set PG_POOLER=transaction/, output);
    });

    test('with PG_PREPARED_STATEMENTS=on it refuses to start, naming the setting', async () => {
      // Issue 36: accepted before, the second of two instances exited on `prepared statement "aapi_0" already exists`.
      const output = await expectStartFailure(workspace, [], { PG_PREPARED_STATEMENTS: 'on' });
      assert.match(output, /PG_PREPARED_STATEMENTS=on cannot be used with PG_POOLER=transaction/, output);
    });

    test("it refuses to start while the database's own statement_timeout is off, or longer than PG_STATEMENT_TIMEOUT_MS", async () => {
      const off = await expectStartFailure(workspace);
      assert.match(off, /statement_timeout bounds single statements, and it is off: run ALTER ROLE/, off);
      // As an operator sets it for the service's role; here on the database, as the tests share one role. PgBouncer's server
      // connections opened before keep the old value, so they are closed (RECONNECT) after each change.
      await database.query(`ALTER DATABASE ${database.name} SET statement_timeout = '2s'`);
      await bouncer.console(`RECONNECT ${database.name}`);
      const longer = await expectStartFailure(workspace);
      assert.match(longer, /it is 2000 ms, longer than PG_STATEMENT_TIMEOUT_MS \(1000 ms\)/, longer);
      await database.query(`ALTER DATABASE ${database.name} SET statement_timeout = '1s'`);
      await bouncer.console(`RECONNECT ${database.name}`);
      alice = await createAccount(workspace, 'alice');
      server = await startServer(workspace);
      assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200);
    });

    test('a write stuck on a row lock is answered 503 store_busy, a single statement as a transaction, then succeeds', async () => {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM accounts WHERE username = 'alice' FOR UPDATE");
      try {
        // One statement (the database's statement_timeout), and a transaction (If-Match: its SET LOCAL statement_timeout).
        for (const headers of [{}, { 'if-match': '*' }] as Record<string, string>[]) {
          const stuck = await call('POST', `${server.api}/user`, { auth: alice, form: { name: 'Stuck' }, headers });
          assert.equal(stuck.status, 503, stuck.text);
          assert.equal(failureMessage(stuck).code, 'store_busy', `the engine cancelled the statement (${JSON.stringify(headers)}), not the client`);
        }
      } finally {
        await holder.query('ROLLBACK');
      }
      const freed = await call('POST', `${server.api}/user`, { auth: alice, form: { name: 'Freed' } });
      assert.equal(freed.status, 200, freed.text);
      assert.equal(freed.body.data.name, 'Freed');
    });

    test('a read stuck on a table lock is answered 503 store_busy, then succeeds', async () => {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE');
      try {
        const stuck = await call('GET', `${server.api}/user`, { auth: alice });
        assert.equal(stuck.status, 503, stuck.text);
        assert.equal(failureMessage(stuck).code, 'store_busy', 'the engine cancelled the read, not the client after its own timeout');
      } finally {
        await holder.query('ROLLBACK');
      }
      assert.equal((await call('GET', `${server.api}/user`, { auth: alice })).status, 200);
    });
  });

  for (const suite of SUITES) {
    test(`${suite.file} passes through it (${suite.covers})`, async () => {
      const before = await transactionsForwarded(bouncer);
      const run = await runSuite(bouncer, suite.file, suite.only);
      const said = `node --test ${suite.file} through PgBouncer exited ${run.code} (${JSON.stringify(run.counts)}):\n${run.output.slice(-20_000)}`;
      assert.equal(run.code, 0, said);
      assert.ok(run.counts.pass > 0, `no case ran: ${said}`);
      assert.deepEqual([run.counts.fail, run.counts.skipped, run.counts.cancelled, run.counts.todo], [0, 0, 0, 0], said);
      assert.ok((await transactionsForwarded(bouncer)) > before, `PgBouncer forwarded no transaction for the suite's databases: ${said}`);
    });
  }
});
