// Protects `serve --workers 2`: two processes on one port and one SQLite file, sharing writes and revocations, restarted when
// killed, summed on METRICS_PORT, and drained together on SIGTERM. Workers are told apart by the `pid` of their log lines.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { loadMigrations } from '../../src/store/migrations.ts';
import { basic } from '../support/http.ts';
import { loadRequest } from '../support/drain-load.ts';
import { eventually, HANG_MS } from '../support/eventually.ts';
import { cliOk, createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { logLines as parsedLogLines, waitForLog as waitForLogLine } from '../support/signals.ts';

interface LogLine {
  readonly pid: number;
  readonly msg: string;
  readonly time: number;
  readonly reqId?: string;
  readonly workerPid?: number;
  readonly workerPids?: number[];
}

const logLines = (server: ServerProcess): LogLine[] => parsedLogLines<LogLine>(server);
const waitForLog = (server: ServerProcess, what: string, match: (line: LogLine) => boolean, timeoutMs?: number) =>
  waitForLogLine<LogLine>(server, what, match, timeoutMs);

let requestCount = 0;

interface Answer {
  readonly status: number;
  readonly body: any;
  /** The process that answered, from its `request completed` line. */
  readonly pid: number;
}

/** One kept-alive TCP connection: node:cluster gives each connection to one worker, so every request on it meets that worker. */
class Connection {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** The worker that answered the first request. */
  pid: number | undefined;
  readonly server: ServerProcess;
  constructor(server: ServerProcess) {
    this.server = server;
  }

  send(method: 'GET' | 'POST', path: string, auth: Account, form?: Record<string, string>): Promise<Answer> {
    const reqId = `workers-test-${process.pid}-${++requestCount}`;
    const body = form === undefined ? undefined : new URLSearchParams(form).toString();
    const url = new URL(`${this.server.api}${path}`);
    return new Promise((resolve, reject) => {
      const outgoing = request(
        {
          agent: this.#agent,
          timeout: HANG_MS,
          host: url.hostname,
          port: url.port,
          method,
          path: url.pathname,
          headers: {
            authorization: basic(auth.username, auth.key),
            'x-request-id': reqId,
            ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', async () => {
            try {
              const line = await waitForLog(this.server, `for request ${reqId}`, (each) => each.reqId === reqId && each.msg === 'request completed');
              this.pid ??= line.pid;
              resolve({ status: response.statusCode!, body: JSON.parse(text), pid: line.pid });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${method} ${path} within ${HANG_MS} ms: taken for a hang`)));
      outgoing.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** Opens connections until each worker has at least `perWorker` of them; fails if round robin never reaches one. */
async function connectionsToEveryWorker(server: ServerProcess, workerPids: readonly number[], auth: Account, perWorker = 1): Promise<Connection[]> {
  const byPid = new Map<number, Connection[]>(workerPids.map((pid) => [pid, []]));
  const opened: Connection[] = [];
  for (let attempt = 0; attempt < 20 * perWorker && [...byPid.values()].some((list) => list.length < perWorker); attempt++) {
    const connection = new Connection(server);
    opened.push(connection);
    const { status, pid } = await connection.send('GET', '/hello', auth);
    assert.equal(status, 200);
    assert.ok(byPid.has(pid), `pid ${pid} answered, but the workers are ${workerPids.join(', ')}`);
    byPid.get(pid)!.push(connection);
  }
  const missing = [...byPid].filter(([, list]) => list.length < perWorker).map(([pid]) => pid);
  assert.deepEqual(missing, [], `${opened.length} connections never reached worker(s) ${missing.join(', ')}`);
  return opened;
}

async function workerPidsOf(server: ServerProcess): Promise<number[]> {
  const ready = await waitForLog(server, "'account-api ready' from the primary", (line) => line.msg === 'account-api ready' && line.workerPids !== undefined);
  return ready.workerPids!;
}

describe('serve --workers 2 on a fresh SQLite database', () => {
  let workspace: Workspace;
  let server: ServerProcess;
  let workers: number[];
  let alice: Account;
  let primaryPid: number;

  before(async () => {
    // Idle kept-alive connections must outlive the test steps so each stays with its worker.
    workspace = createWorkspace({ METRICS_PORT: '0', KEEP_ALIVE_TIMEOUT_MS: '600000' });
    server = await startServer(workspace, ['--workers', '2']);
    primaryPid = server.child.pid!;
    workers = await workerPidsOf(server);
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  });

  after(async () => {
    if (server.child.exitCode === null) await server.kill();
    workspace.cleanup();
  });

  test('the primary migrated once, before any worker started, and said where it listens once', () => {
    assert.equal(workers.length, 2);
    assert.ok(!workers.includes(primaryPid), 'the primary counts itself among its workers');
    const database = new DatabaseSync(join(workspace.dir, 'live.db'), { readOnly: true });
    const rows = database.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    database.close();
    const versions = loadMigrations(join(import.meta.dirname, '../../src/store/sqlite/migrations')).map((migration) => migration.version);
    assert.deepEqual(rows.map((row) => row.version), versions, 'schema_migrations should hold one row per migration');
    const firstWorkerLine = Math.min(...logLines(server).filter((line) => workers.includes(line.pid)).map((line) => line.time));
    assert.ok(Date.parse(String(rows[0]!.applied_at)) <= firstWorkerLine, 'the schema was applied after a worker had started');
    assert.equal(server.output.filter((line) => line.startsWith('account-api listening at')).length, 1, 'the listening line was printed more than once');
    assert.equal(server.output.filter((line) => line.startsWith('No accounts yet')).length, 1, "'No accounts yet' was printed more than once");
  });

  test('both workers answer, and a write through one is read through the other', async () => {
    const connections = await connectionsToEveryWorker(server, workers, alice);
    const [first, second] = workers.map((pid) => connections.find((connection) => connection.pid === pid)) as [Connection, Connection];
    const written = await first.send('POST', '/user', alice, { name: 'Alice Written By One' });
    assert.equal(written.status, 200);
    assert.equal(written.pid, workers[0], 'a kept-alive connection moved to another worker');
    const read = await second.send('GET', '/user', alice);
    assert.equal(read.pid, workers[1]);
    assert.equal(read.body.data.name, 'Alice Written By One');
    for (const connection of connections) connection.close();
  });

  test('a key revoked with the CLI is refused at the very next request on every connection, to both workers', async () => {
    const bob = await createAccount(workspace, 'bob');
    const connections = await connectionsToEveryWorker(server, workers, bob, 3);
    const [key] = JSON.parse(await cliOk(workspace, ['keys', 'list', 'bob', '--json']));
    await cliOk(workspace, ['keys', 'revoke', key.key_id]);
    // The first request on each connection after the CLI exits (docs/api.md: the very next request), not within some time.
    const answers = await Promise.all(connections.map((connection) => connection.send('GET', '/settings', bob)));
    for (const connection of connections) connection.close();
    for (const answer of answers) {
      assert.equal(answer.status, 401, `worker ${answer.pid} still accepted the revoked key on the first request after the CLI exited`);
      assert.equal(answer.body.messages[0].code, 'key_revoked');
    }
    assert.deepEqual(new Set(answers.map((answer) => answer.pid)), new Set(workers), 'the refusals did not come from both workers');
  });

  test('METRICS_PORT is served by the primary and sums both workers', async () => {
    const metricsUrl = /^metrics at (\S+)/.exec(server.output.find((line) => line.startsWith('metrics at ')) ?? '')?.[1];
    assert.ok(metricsUrl !== undefined, 'the primary did not print its metrics URL');
    const answered = () => logLines(server).filter((line) => line.msg === 'request completed' && workers.includes(line.pid)).length;
    assert.ok(new Set(logLines(server).filter((line) => line.msg === 'request completed').map((line) => line.pid)).size >= 2, 'both workers should have answered by now');
    // A log line and a counter are each written a moment after the answer, and a loaded machine can stretch that moment:
    // the two are compared until they agree (a sum that leaves a worker out never does, and the wait fails as a hang).
    let last = { counted: -1, answered: 0 };
    await eventually(
      'http_requests_total equal to the requests both workers logged',
      async () => {
        const text = await (await fetch(metricsUrl)).text();
        const counted = [...text.matchAll(/^http_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
        return (last = { counted, answered: answered() });
      },
      ({ counted, answered }) => counted === answered,
    );
    assert.equal(last.counted, last.answered, 'http_requests_total is not the sum of the requests both workers answered');
  });

  test('a worker killed with SIGKILL is restarted, and service continues meanwhile', async () => {
    const [victim, survivor] = workers as [number, number];
    const before = await connectionsToEveryWorker(server, workers, alice);
    const kept = before.find((connection) => connection.pid === survivor)!;
    process.kill(victim, 'SIGKILL');
    const exitLine = await waitForLog(server, 'saying the worker died', (line) => line.msg === 'worker exited unexpectedly: restarting it');
    assert.equal(exitLine.workerPid, victim, 'the primary did not log which worker died');
    assert.equal(exitLine.pid, primaryPid);
    const during: number[] = [];
    const killedAt = Date.now();
    let restarted: LogLine | undefined;
    // Once the primary knows, new connections go to the survivor until the replacement listens; kept ones are untouched.
    while (restarted === undefined) {
      during.push((await kept.send('GET', '/hello', alice)).status);
      const connection = new Connection(server);
      during.push((await connection.send('GET', '/hello', alice)).status);
      connection.close();
      restarted = logLines(server).find((line) => line.msg === 'worker restarted and listening');
      assert.ok(Date.now() - killedAt < HANG_MS, `the killed worker was not restarted within ${HANG_MS} ms: taken for a hang`);
    }
    assert.ok(
      during.every((status) => status === 200),
      `requests during the restart failed: ${during.filter((status) => status !== 200).join(', ')}`,
    );
    workers = [survivor, restarted.workerPid!];
    const connections = await connectionsToEveryWorker(server, workers, alice);
    for (const connection of [...before, ...connections]) connection.close();
    console.log(`worker ${victim} killed; ${during.length} requests answered 200 until ${restarted.workerPid} replaced it`);
  });

  test('SIGTERM under load: every request that reached a worker is answered, both drain, and the primary exits 0', async () => {
    const clients = 16;
    const agent = new Agent({ keepAlive: true, maxSockets: clients });
    const port = Number(new URL(server.url).port);
    const counts = { ok: 0, shutting_down: 0, refused: 0, failed: 0 };
    const failures: string[] = [];
    let signalled = false;
    const load = Array.from({ length: clients }, async (_, client) => {
      for (let index = client; ; index += clients) {
        const outcome = await loadRequest(agent, port, alice, index);
        if (outcome.kind === 'failed') failures.push(outcome.why);
        counts[outcome.kind]++;
        if (outcome.kind === 'refused' || (outcome.kind === 'failed' && !signalled)) return;
      }
    });
    // Signalled once the load runs on every client, however long a busy machine takes to get it going.
    await eventually('every client answered once', () => counts.ok, (ok) => ok >= clients);
    signalled = true;
    const signalledAt = Date.now();
    const exitCode = await server.stop();
    const exitedAfterMs = Date.now() - signalledAt;
    await Promise.all(load);
    agent.destroy();
    console.log(
      `shutdown of 2 workers under load: ${counts.ok} answered 200, ${counts.shutting_down} answered 503 shutting_down, ` +
        `${counts.refused} new connections refused, ${counts.failed} failed; exit ${exitCode} ${exitedAfterMs} ms after SIGTERM`,
    );
    assert.deepEqual(failures, [], 'requests that reached a worker were cut off instead of answered');
    assert.ok(counts.ok > 0, 'the load never ran');
    assert.equal(exitCode, 0, `the primary exited ${exitCode}:\n${server.output.slice(-10).join('\n')}`);
    const stopped = logLines(server).filter((line) => line.msg === 'stopped').map((line) => line.pid);
    assert.deepEqual(new Set(stopped), new Set([...workers, primaryPid]), 'not every worker and the primary logged that it stopped');
    assert.equal(existsSync(join(workspace.dir, 'live.db-wal')), false, 'a worker did not close the database: its WAL file is still there');
  });
});

describe('serve --workers 2 when things go wrong', () => {
  let workspace: Workspace;
  before(() => {
    workspace = createWorkspace();
  });
  after(() => workspace.cleanup());

  test('a worker that cannot listen stops the start with status 1', async () => {
    const first = await startServer(workspace, ['--workers', '2']);
    try {
      const port = new URL(first.url).port;
      const second = await startServer(workspace, ['--workers', '2', '--port', port]).then(
        async (started) => {
          await started.kill();
          return null;
        },
        (error: Error) => error.message,
      );
      assert.ok(second !== null, 'a second server started on a port the first one holds');
      assert.match(second, /exited with 1/);
      // Said as one line naming the port and the setting (listen-failures.test.ts), not as EADDRINUSE with a stack.
      assert.match(second, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*\\bPORT\\b`));
    } finally {
      await first.stop();
    }
  });

  test('a drain that outlasts SHUTDOWN_TIMEOUT_MS: the primary says so, kills the workers and exits 1', async () => {
    const server = await startServer(workspace, ['--workers', '2'], { SHUTDOWN_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '600000', HEADERS_TIMEOUT_MS: '600000' });
    const workerPids = await workerPidsOf(server);
    // A request whose body never comes: it stays in flight, so its worker's close waits for it.
    const stuck = connect(Number(new URL(server.url).port), '127.0.0.1');
    stuck.on('error', () => {});
    await new Promise((resolve) => stuck.once('connect', resolve));
    stuck.write('POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    // Time for a worker to take the request: the one wait here the server gives no sign of having passed (nothing is logged
    // before an answer); a second is generous, and too short a wait fails as exit 0, never as a false pass.
    await sleep(1000);
    const startedAt = Date.now();
    const exitCode = await server.stop();
    const tookMs = Date.now() - startedAt;
    assert.equal(exitCode, 1, `a stuck shutdown must exit 1, not ${exitCode}`);
    // Exit 1 and the line below say it gave up at SHUTDOWN_TIMEOUT_MS (the stuck request's own timeout is 600 s, after which
    // the drain would finish and exit 0); that it waited the timeout out is a lower bound, which load cannot break.
    assert.ok(tookMs >= 1000, `the primary gave up after ${tookMs} ms, before its 1000 ms SHUTDOWN_TIMEOUT_MS`);
    assert.ok(
      server.output.some((line) => line.includes('shutdown did not finish within SHUTDOWN_TIMEOUT_MS')),
      `no log line says why the server exited 1:\n${server.output.slice(-5).join('\n')}`,
    );
    // Killed before the primary exits, but reaped by init a moment later: waited for, not assumed after 100 ms.
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // The stuck request stays open meanwhile: a worker the primary did not kill would still be draining it.
    await eventually('the workers gone after their primary', () => workerPids.filter(alive), (left) => left.length === 0);
    stuck.destroy();
  });
});

