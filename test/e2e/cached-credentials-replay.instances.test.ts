// A write whose commit succeeded but whose reply from PostgreSQL was lost is answered 503 and announced to nobody; its
// replay (the same Idempotency-Key) announces it, so a warmed instance serves the new value at its very next request.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { call, failureMessage } from '../support/http.ts';
import { warm } from '../support/cached-credentials.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { freePort, redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const { after, before, describe, test } = requiring((await postgresSkipReason()) ?? (await redisSkipReason()));

/**
 * A TCP relay to PostgreSQL that, once armed, lets through the COMMIT of the next transaction that locked an idempotency key
 * (a keyed account write) and then cuts the connection instead of relaying PostgreSQL's reply: the commit happened, the
 * service never hears so. Statement texts are matched, so the service runs with PG_PREPARED_STATEMENTS=off.
 */
interface LostCommitRelay {
  readonly port: number;
  arm(): void;
  /** Whether a commit's reply was cut since arming. */
  cut(): boolean;
  close(): Promise<void>;
}

async function lostCommitRelay(target: URL): Promise<LostCommitRelay> {
  let armed = false;
  let cut = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port || '5432') });
    sockets.add(client).add(upstream);
    let writing = false;
    let cutting = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes('idempotency_keys') && chunk.includes('FOR UPDATE')) writing = true;
      if (armed && writing && chunk.includes('COMMIT')) {
        armed = false;
        cutting = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cutting) return void client.write(chunk);
      cut = true;
      end();
    });
  });
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    port,
    arm: () => {
      armed = true;
      cut = false;
    },
    cut: () => cut,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}

describe('a write acknowledged only by its replay', () => {
  let database: TestDatabase;
  let relay: LostCommitRelay;
  let workspace: Workspace;
  let a: ServerProcess;
  let b: ServerProcess;
  let alice: Account;

  before(async () => {
    database = await createTestDatabase();
    relay = await lostCommitRelay(new URL(database.url));
    const throughRelay = new URL(database.url);
    throughRelay.hostname = '127.0.0.1';
    throughRelay.port = String(relay.port);
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      // Far longer than the test: only an announcement can make B read the credential again.
      CREDENTIAL_CACHE_MAX_AGE_MS: '600000',
    });
    [a, b] = await Promise.all([
      startServer(workspace, [], { DATABASE_URL: throughRelay.toString(), PG_PREPARED_STATEMENTS: 'off' }),
      startServer(workspace),
    ]);
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await relay?.close();
    await database?.drop();
    workspace?.cleanup();
  });

  test('is announced by the replay: the other instance serves the new name at its very next request', async () => {
    await warm(b, alice);
    const key = randomUUID();
    relay.arm();
    const lost = await call('POST', `${a.api}/user`, { auth: alice, form: { name: 'Alice Renamed' }, headers: { 'idempotency-key': key } });
    assert.ok(relay.cut(), `the relay cut no commit's reply: ${lost.status} ${lost.text}`);
    assert.equal(lost.status, 503, lost.text);
    assert.equal(failureMessage(lost).code, 'store_unavailable');
    const stored = await database.query("SELECT name FROM accounts WHERE username = 'alice'");
    assert.equal(stored.rows[0].name, 'Alice Renamed', 'the commit whose reply was lost happened');
    // Nobody was told: B still serves its cached account (the premise of the fault, not the fix).
    assert.equal((await call('GET', `${b.api}/user`, { auth: alice })).body.data.name, 'Alice');

    const replay = await call('POST', `${a.api}/user`, { auth: alice, form: { name: 'Alice Renamed' }, headers: { 'idempotency-key': key } });
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true', 'the retry replays the kept answer');
    const next = await call('GET', `${b.api}/user`, { auth: alice });
    assert.equal(next.body.data.name, 'Alice Renamed', "B's very next request after the replay should serve the new name: the replay announced nothing");
  });
});
