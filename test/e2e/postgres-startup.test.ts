// PostgreSQL down when `serve` starts: the server listens anyway, answers 503 where the database is needed, and serves once it
// comes, without a restart; --store-fail-fast (STORE_FAIL_FAST=1) keeps the old exit at start.
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { requiring } from '../support/requiring.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

import { composeKey } from '../../src/domain/api-keys.ts';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { basic, call, failureMessage } from '../support/http.ts';
import { privatePostgres, privatePostgresSkipReason, type PrivatePostgres } from '../support/private-postgres.ts';
import { HANG_MS } from '../support/eventually.ts';
import { freePort } from '../support/redis.ts';
import { createAccount, createWorkspace, runCli, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { logLines as parsedLogLines, logsSettled } from '../support/signals.ts';

/**
 * How long the server may take to notice the engine before the wait is taken for a hang: a hang detector, not a timing
 * check (the back-off is capped at 5 s; a loaded machine may take far longer than that to get through start-up).
 */
const RECOVERY_BOUND_MS = HANG_MS;

/** Well-formed, so authentication asks the store; the store has never seen it. */
const UNKNOWN_KEY = composeKey('live', 'AbCdEfGhIjKl', 'a'.repeat(32)).token;

interface LogLine {
  readonly pid: number;
  readonly msg: string;
  readonly attempts?: number;
  readonly reqId?: string;
  readonly statusCode?: number;
  readonly route?: string;
}

const logLines = (server: ServerProcess): LogLine[] => parsedLogLines<LogLine>(server);

/** Polls until `ready` holds; returns how long that took, or fails saying what was still wrong. */
async function pollUntil(what: string, ready: () => Promise<boolean>, boundMs = RECOVERY_BOUND_MS): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < boundMs) {
    if (await ready()) return performance.now() - started;
    await sleep(50);
  }
  throw new Error(`${what} did not happen within ${boundMs} ms: taken for a hang`);
}

/** One GET on a connection of its own, so node:cluster hands each to the next worker in turn. */
function getOnNewConnection(url: string, authorization?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: authorization === undefined ? {} : { authorization }, timeout: HANG_MS }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.on('timeout', () => request.destroy(new Error(`no answer to GET ${url} within ${HANG_MS} ms: taken for a hang`)));
  });
}

async function assertWaiting(server: ServerProcess, authorization: string): Promise<void> {
  assert.equal((await call('GET', `${server.url}/healthz`)).status, 200, '/healthz answers while the database is down');
  const ready = await call('GET', `${server.url}/readyz`);
  assert.equal(ready.status, 503, `/readyz while the database is down: ${ready.text}`);
  assert.equal(failureMessage(ready).code, 'not_ready');
  assert.equal((await call('GET', `${server.api}/hello`)).status, 200, '/hello without credentials needs no database');
  for (const [method, path] of [
    ['GET', '/user'],
    ['POST', '/settings'],
  ] as const) {
    const down = await call(method, `${server.api}${path}`, { auth: authorization, ...(method === 'POST' ? { form: { timezone: 'UTC' } } : {}) });
    assert.equal(down.status, 503, `${method} ${path} while the database is down: ${down.text}`);
    assert.equal(failureMessage(down).code, 'store_unavailable');
    assert.ok(Number(down.headers.get('retry-after')) > 0, 'a 503 says when to retry');
  }
}

/** The test before may have failed with the engine still down. */
function stopIfRunning(engine: PrivatePostgres): void {
  try {
    engine.stop();
  } catch {
    // not running
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

const { after, before, describe, test } = requiring(privatePostgresSkipReason());

describe('serve with PostgreSQL down at start', () => {
  let engine: PrivatePostgres;
  let workspace: Workspace;
  const servers: ServerProcess[] = [];

  before(async () => {
    engine = await privatePostgres();
    // A second, empty database for the sandbox test, made while the engine is up.
    const admin = new pg.Client({ connectionString: engine.url });
    await admin.connect();
    await admin.query('CREATE DATABASE sandbox');
    await admin.end();
    engine.stop();
    workspace = createWorkspace({
      DATABASE_URL: engine.url,
      SANDBOX_DATABASE_URL: withDatabase(engine.url, 'sandbox'),
      PG_CONNECT_TIMEOUT_MS: '1000',
    });
  });

  after(async () => {
    for (const server of servers) await server.stop();
    engine.cleanup();
    workspace.cleanup();
  });

  test('listens, answers 503 where the database is needed, then migrates and serves once it comes, without a restart', async () => {
    const server = await startServer(workspace);
    servers.push(server);
    await pollUntil(
      'the banner saying it waits for PostgreSQL',
      async () => server.output.some((line) => line.startsWith('Waiting for PostgreSQL at 127.0.0.1:')),
    );
    await assertWaiting(server, basic('alice', UNKNOWN_KEY));

    const startedAt = performance.now();
    engine.start();
    const engineUpMs = performance.now() - startedAt;
    const readyMs = await pollUntil('/readyz 200 after PostgreSQL came back', async () => (await call('GET', `${server.url}/readyz`)).status === 200);
    console.log(`postgres at start: engine start took ${engineUpMs.toFixed(0)} ms; /readyz 200 ${readyMs.toFixed(0)} ms after it answered`);

    const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
    const user = await call('GET', `${server.api}/user`, { auth: alice });
    assert.equal(user.status, 200, `GET /user once the database answers: ${user.text}`);
    assert.equal(user.body.data.name, 'Alice');
    assert.equal(server.child.exitCode, null, 'the server never exited');

    const connected = logLines(server).filter((line) => line.msg === 'database connected: serving requests');
    assert.equal(connected.length, 1, 'the server should say once that the database answered');
    const warnings = logLines(server).filter((line) => line.msg === 'waiting for the database: retrying');
    assert.ok(warnings.length >= 1, 'a failed attempt should be logged');
    assert.ok(connected[0]!.attempts! > warnings.length, `${connected[0]!.attempts} attempts logged ${warnings.length} warnings: one per attempt is a flood`);
    assert.ok(server.output.some((line) => /^PostgreSQL at .* answered: serving requests\.$/.test(line)), 'the banner should say it is serving now');
  });

  test('serve --workers 2 --sandbox: workers answer 503 until the primary has migrated and seeded, then every worker serves', async () => {
    stopIfRunning(engine);
    const server = await startServer(workspace, ['--workers', '2', '--sandbox']);
    servers.push(server);
    const demo = demoAccounts().find((account) => account.premium)!;
    const demoAuth = basic(demo.username, demo.key.token);
    await assertWaiting(server, demoAuth);
    assert.equal((await getOnNewConnection(`${server.url}/readyz`)).status, 503);

    const servingPids = () =>
      new Set(
        logLines(server)
          .filter((line) => line.msg === 'request completed' && line.route === '/api/v0/user' && line.statusCode === 200)
          .map((line) => line.pid),
      );
    engine.start();
    // Four connections in a row, each handed to the next worker: all four 200 means both workers serve.
    const servedMs = await pollUntil('every worker answering the demo key 200 after PostgreSQL came back', async () => {
      for (let each = 0; each < 4; each++) {
        if ((await getOnNewConnection(`${server.api}/user`, demoAuth)).status !== 200) return false;
      }
      return true;
    });
    console.log(`postgres at start, 2 workers: every worker answering 200 ${servedMs.toFixed(0)} ms after the engine answered`);

    // Log lines are written after the answer: waited for, since a loaded machine can hold them back for a while.
    await pollUntil('both workers logging a 200 for /user', async () => servingPids().size === 2);
    await logsSettled(server);
    const workerPids = servingPids();
    assert.equal(workerPids.size, 2, 'both workers should have answered 200');
    assert.equal(
      logLines(server).filter((line) => line.msg === 'database connected: serving requests' && !workerPids.has(line.pid)).length,
      1,
      'the primary should have prepared the database once',
    );
    assert.ok(
      server.output.some((line) => line.includes(demo.key.token)),
      `the banner should list the demo keys once the database answered:\n${server.output.join('\n')}`,
    );
    assert.equal(server.child.exitCode, null, 'the server never exited');
  });
});

describe('serve with PostgreSQL down at start, then answering with a failure waiting cannot cure', () => {
  let engine: PrivatePostgres;
  let workspace: Workspace;

  before(async () => {
    engine = await privatePostgres();
    engine.stop();
    // The engine comes back, but without this database: what fail-fast would have reported at start.
    workspace = createWorkspace({ DATABASE_URL: withDatabase(engine.url, 'missing'), PG_CONNECT_TIMEOUT_MS: '1000' });
  });

  after(() => {
    engine.cleanup();
    workspace.cleanup();
  });

  for (const args of [[], ['--workers', '2']]) {
    test(`serve ${args.join(' ')} stops with status 1 and says why, rather than wait forever`, async () => {
      stopIfRunning(engine);
      const server = await startServer(workspace, args);
      try {
        assert.equal((await call('GET', `${server.url}/readyz`)).status, 503);
        engine.start();
        const code = await Promise.race([server.exited, sleep(RECOVERY_BOUND_MS).then(() => 'still running')]);
        assert.equal(code, 1, `serve should have exited 1:\n${server.output.slice(-10).join('\n')}`);
        assert.ok(
          server.output.some((line) => line.includes('the database cannot be used: stopping') && /database \\?"missing\\?" does not exist/.test(line)),
          `the log should say why:\n${server.output.join('\n')}`,
        );
      } finally {
        await server.kill();
      }
    });
  }
});

describe('serve --store-fail-fast', () => {
  let workspace: Workspace;

  before(async () => {
    // A port nothing listens on: the engine is simply not there.
    workspace = createWorkspace({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` });
  });

  after(() => workspace.cleanup());

  for (const [how, args, env] of [
    ['--store-fail-fast', ['--store-fail-fast'], {}],
    ['STORE_FAIL_FAST=1', [], { STORE_FAIL_FAST: '1' }],
  ] as const) {
    test(`with ${how}, exits 1 at start, saying the database is unreachable`, async () => {
      const result = await runCli(workspace, ['serve', '--host', '127.0.0.1', '--port', '0', ...args], env);
      assert.equal(result.code, 1, `serve should exit 1:\n${result.stderr}`);
      assert.match(result.stderr, /database is unreachable.*ECONNREFUSED/, 'the message should say why');
      assert.doesNotMatch(result.stderr, /listening at/, 'it should not have listened');
    });
  }
});
