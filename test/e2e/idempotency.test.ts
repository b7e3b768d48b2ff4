// Idempotency-Key on POST /user and POST /settings, over real server processes on SQLite and on PostgreSQL (one and two instances).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import pg from 'pg';
import { call, failureMessage, type CallOptions, type CallResult } from '../support/http.ts';
import { fingerprint } from '../../src/http/writes/idempotency.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { cliOk, createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const postgresSkip = await postgresSkipReason();

function post(server: ServerProcess, path: string, account: Account, key: string | undefined, options: CallOptions): Promise<CallResult> {
  const headers = { ...options.headers, ...(key === undefined ? {} : { 'idempotency-key': key }) };
  return call('POST', `${server.api}${path}`, { auth: account, ...options, headers });
}

async function readName(server: ServerProcess, account: Account): Promise<string> {
  const result = await call('GET', `${server.api}/user`, { auth: account });
  assert.equal(result.status, 200, result.text);
  return result.body.data.name;
}

function assertReplayOf(replay: CallResult, first: CallResult, what: string): void {
  assert.equal(replay.status, first.status, `${what}: the replay's status differs: ${replay.text}`);
  assert.equal(replay.text, first.text, `${what}: the replay is not the first answer byte for byte`);
  assert.equal(replay.headers.get('content-type'), first.headers.get('content-type'), `${what}: the replay's Content-Type differs`);
  assert.equal(replay.headers.get('etag'), first.headers.get('etag'), `${what}: the replay's ETag differs`);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true', `${what}: the replay does not say Idempotent-Replayed: true`);
  assert.notEqual(replay.headers.get('x-request-id'), first.headers.get('x-request-id'), `${what}: the replay reused the first request id`);
}

/** Of concurrent requests with one idempotency key: exactly one ran; each other was refused as in use, or replayed its answer. */
function assertRanOnce(results: readonly CallResult[]): void {
  const ran = results.filter((result) => result.status === 200 && result.headers.get('idempotent-replayed') === null);
  assert.equal(ran.length, 1, `${ran.length} requests ran: ${results.map((result) => result.status).join(', ')}`);
  for (const result of results) {
    if (result === ran[0]) continue;
    if (result.status === 409) assertFailure(result, 409, 'idempotency_key_in_use', 'a concurrent request');
    else assertReplayOf(result, ran[0]!, 'a later request');
  }
}

function assertFailure(result: CallResult, status: number, code: string, what: string): void {
  assert.equal(result.status, status, `${what}: expected ${status}, got ${result.status}: ${result.text}`);
  assert.equal(failureMessage(result).code, code, `${what}: ${result.text}`);
}

interface Engine {
  readonly name: string;
  readonly skip: string | undefined;
  /** Environment for the workspace, and what a test does behind the server's back. */
  setUp(): Promise<{
    env: NodeJS.ProcessEnv;
    holdKey(workspace: Workspace, accountName: string, key: string, fingerprint: string): Promise<void>;
    drop(): Promise<void>;
  }>;
}

const ENGINES: readonly Engine[] = [
  {
    name: 'SQLite',
    skip: undefined,
    setUp: async () => ({
      env: {},
      // Another process (a worker, say) holds the key while its request runs.
      holdKey: async (workspace, accountName, key, held) => {
        const db = new DatabaseSync(join(workspace.dir, 'live.db'), { timeout: 5000 });
        try {
          db.prepare(
            `INSERT INTO idempotency_keys (account_id, key, fingerprint, token, locked_until, expires_at)
             SELECT id, ?, ?, 'elsewhere', ?, ? FROM accounts WHERE username = ?`,
          ).run(key, held, Date.now() + 60_000, Date.now() + 60_000, accountName);
        } finally {
          db.close();
        }
      },
      drop: async () => undefined,
    }),
  },
  {
    name: 'PostgreSQL',
    skip: postgresSkip,
    setUp: async () => {
      const database = await createTestDatabase();
      return {
        env: { DATABASE_URL: database.url },
        holdKey: async (_workspace, accountName, key, held) => {
          await database.query(
            `INSERT INTO idempotency_keys (account_id, key, fingerprint, token, locked_until, expires_at)
             SELECT id, $1, $3, 'elsewhere', now() + interval '1 minute', now() + interval '1 minute' FROM accounts WHERE username = $2`,
            [key, accountName, held],
          );
        },
        drop: () => database.drop(),
      };
    },
  },
];

for (const engine of ENGINES) {
  const { after, before, describe, test } = requiring(engine.skip);
  describe(`Idempotency-Key over ${engine.name}`, () => {
    let workspace: Workspace;
    let server: ServerProcess;
    let setUp: Awaited<ReturnType<Engine['setUp']>>;

    before(async () => {
      setUp = await engine.setUp();
      workspace = createWorkspace(setUp.env);
      server = await startServer(workspace);
    });

    after(async () => {
      await server.stop();
      await setUp.drop();
      workspace.cleanup();
    });

    test('a repeated POST /user gets the first answer again, byte for byte, and changes nothing twice', async () => {
      const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
      const key = randomUUID();
      const first = await post(server, '/user', alice, key, { form: { name: 'Alice One' } });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null, 'the first answer says it was replayed');
      assert.equal(first.body.data.name, 'Alice One');
      // Someone changes the name in between: a repeat must not set it back.
      assert.equal((await post(server, '/user', alice, undefined, { form: { name: 'Changed since' } })).status, 200);
      const replay = await post(server, '/user', alice, key, { form: { name: 'Alice One' } });
      assertReplayOf(replay, first, 'POST /user');
      assert.equal(await readName(server, alice), 'Changed since', 'the repeat wrote the name again');
    });

    test('a repeated POST /settings gets the first answer again, in either body encoding', async () => {
      const bob = await createAccount(workspace, 'bob', { timezone: 'UTC' });
      const key = randomUUID();
      const first = await post(server, '/settings', bob, key, { form: { timezone: 'Asia/Tokyo' } });
      assert.equal(first.status, 200, first.text);
      assert.equal((await post(server, '/settings', bob, undefined, { form: { timezone: 'Europe/Paris' } })).status, 200);
      assertReplayOf(await post(server, '/settings', bob, key, { json: { timezone: 'Asia/Tokyo' } }), first, 'POST /settings as JSON');
      const settings = await call('GET', `${server.api}/settings`, { auth: bob });
      assert.equal(settings.body.data.timezone, 'Europe/Paris', 'the repeat wrote the timezone again');
    });

    test('the same key with a different body is 422 idempotency_key_reused, and writes nothing', async () => {
      const carol = await createAccount(workspace, 'carol', { name: 'Carol' });
      const key = randomUUID();
      assert.equal((await post(server, '/user', carol, key, { form: { name: 'Carol One' } })).status, 200);
      assertFailure(await post(server, '/user', carol, key, { form: { name: 'Carol Two' } }), 422, 'idempotency_key_reused', 'another body');
      assertFailure(await post(server, '/settings', carol, key, { form: { timezone: 'UTC' } }), 422, 'idempotency_key_reused', 'another path');
      assert.equal(await readName(server, carol), 'Carol One');
    });

    test('keys are per account: the same key from another account is a request of its own', async () => {
      const dave = await createAccount(workspace, 'dave', { name: 'Dave' });
      const erin = await createAccount(workspace, 'erin', { name: 'Erin' });
      const key = randomUUID();
      assert.equal((await post(server, '/user', dave, key, { form: { name: 'Dave One' } })).body.data.name, 'Dave One');
      const other = await post(server, '/user', erin, key, { form: { name: 'Erin One' } });
      assert.equal(other.status, 200, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null);
      assert.equal(other.body.data.name, 'Erin One');
    });

    test('a failure of the request itself (400 invalid_name) is kept and replayed', async () => {
      const frank = await createAccount(workspace, 'frank');
      const key = randomUUID();
      const first = await post(server, '/user', frank, key, { form: { name: '\u0007bell' } });
      assertFailure(first, 400, 'invalid_name', 'a control character');
      assertReplayOf(await post(server, '/user', frank, key, { form: { name: '\u0007bell' } }), first, 'the 400');
    });

    test('a malformed Idempotency-Key is 400 invalid_idempotency_key and writes nothing', async () => {
      const grace = await createAccount(workspace, 'grace', { name: 'Grace' });
      for (const key of ['x'.repeat(256), 'caf\u00e9']) {
        const result = await call('POST', `${server.api}/user`, { auth: grace, form: { name: 'Nope' }, headers: { 'idempotency-key': key } });
        assertFailure(result, 400, 'invalid_idempotency_key', `key of ${key.length} characters`);
      }
      assert.equal(await readName(server, grace), 'Grace');
      assert.equal((await post(server, '/user', grace, 'x'.repeat(255), { form: { name: 'Max key' } })).status, 200, 'a 255-character key');
    });

    test('a key another request still holds is 409 idempotency_key_in_use, and writes nothing', async () => {
      const heidi = await createAccount(workspace, 'heidi', { name: 'Heidi' });
      // As another process (a worker, another instance) would while its request with this key and body runs.
      await setUp.holdKey(workspace, 'heidi', 'held-elsewhere', fingerprint('POST', '/api/v0/user', undefined, { name: 'Heidi Two' }));
      assertFailure(await post(server, '/user', heidi, 'held-elsewhere', { form: { name: 'Heidi Two' } }), 409, 'idempotency_key_in_use', 'held');
      // Another body with a held key is another request, whatever the first one's fate: 422 at once.
      assertFailure(await post(server, '/user', heidi, 'held-elsewhere', { form: { name: 'Heidi Three' } }), 422, 'idempotency_key_reused', 'held');
      assert.equal(await readName(server, heidi), 'Heidi');
    });

    test('a keyed write is audited once, with its request id; its replays and a refused If-Match add no entry', async () => {
      const judy = await createAccount(workspace, 'judy', { name: 'Judy' });
      const audited = async () => JSON.parse(await cliOk(workspace, ['audit', '--json', '--user', 'judy'])) as Record<string, any>[];
      const etag = (await call('GET', `${server.api}/user`, { auth: judy })).headers.get('etag')!;
      const key = randomUUID();
      const first = await post(server, '/user', judy, key, { form: { name: 'Judy One' }, headers: { 'if-match': etag } });
      assert.equal(first.status, 200, first.text);
      assertReplayOf(await post(server, '/user', judy, key, { form: { name: 'Judy One' }, headers: { 'if-match': etag } }), first, 'the replay');
      // The account changed since that ETag: refused, and nothing to audit.
      const stale = await post(server, '/user', judy, randomUUID(), { form: { name: 'Judy Two' }, headers: { 'if-match': etag } });
      assertFailure(stale, 412, 'precondition_failed', 'a stale If-Match');
      const entries = (await audited()).filter((entry) => entry.action === 'account.updated');
      assert.equal(entries.length, 1, `expected one account.updated entry: ${JSON.stringify(entries)}`);
      assert.deepEqual(entries[0]!.changes, { name: { old: 'Judy', new: 'Judy One' } });
      assert.match(String(entries[0]!.actor), /^key:[0-9A-Za-z]{12}$/, 'the entry should name the key that made the change');
      assert.equal(entries[0]!.request_id, first.headers.get('x-request-id'), 'the entry should carry the first request id');
    });

    test('concurrent requests with one key: exactly one runs, every other gets 409 or, once it is answered, its answer', async () => {
      const ivan = await createAccount(workspace, 'ivan', { name: 'Ivan' });
      const key = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 12 }, () => post(server, '/user', ivan, key, { form: { name: 'Ivan Once' } })),
      );
      assertRanOnce(results);
    });
  });
}

/** Two instances sharing one PostgreSQL: a key claimed through one holds for the other, and its answer is replayed by both. */
function describeTwoInstances(): void {
  const { after, before, describe, test } = requiring(postgresSkip);
  describe('Idempotency-Key on two instances sharing PostgreSQL', () => {
    let database: TestDatabase;
    let workspace: Workspace;
    let instances: [ServerProcess, ServerProcess];

    before(async () => {
      database = await createTestDatabase();
      workspace = createWorkspace({ DATABASE_URL: database.url });
      instances = (await Promise.all([startServer(workspace), startServer(workspace)])) as [ServerProcess, ServerProcess];
    });

    after(async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
      await database.drop();
      workspace.cleanup();
    });

    test('while a request runs on one instance, its key is 409 on the other; then both replay its answer', async () => {
      const judy = await createAccount(workspace, 'judy', { name: 'Judy' });
      const [one, two] = instances;
      const key = randomUUID();
      // Holds the account's row as a slow writer would, so the first request claims its key and then waits to write.
      const blocker = new pg.Client({ connectionString: database.url });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query("SELECT id FROM accounts WHERE username = 'judy' FOR NO KEY UPDATE");
        const running = post(one, '/user', judy, key, { form: { name: 'Judy Once' } });
        const claimed = async () =>
          (await database.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key])).rows[0].n === 1;
        for (let waited = 0; !(await claimed()); waited += 20) {
          assert.ok(waited < 5000, 'the first request never claimed its key');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assertFailure(await post(two, '/user', judy, key, { form: { name: 'Judy Once' } }), 409, 'idempotency_key_in_use', 'the other instance');
        await blocker.query('COMMIT');
        const first = await running;
        assert.equal(first.status, 200, first.text);
        assertReplayOf(await post(two, '/user', judy, key, { form: { name: 'Judy Once' } }), first, 'through the other instance');
        assertReplayOf(await post(one, '/user', judy, key, { form: { name: 'Judy Once' } }), first, 'through the same instance');
      } finally {
        await blocker.query('ROLLBACK').catch(() => undefined);
        await blocker.end();
      }
    });

    test('concurrent requests with one key spread over both instances: exactly one runs', async () => {
      const ken = await createAccount(workspace, 'ken', { timezone: 'UTC' });
      const key = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) => post(instances[index % 2]!, '/settings', ken, key, { form: { timezone: 'Asia/Seoul' } })),
      );
      assertRanOnce(results);
    });

    test('If-Match through both instances at once: exactly one write over the version both read', async () => {
      const leo = await createAccount(workspace, 'leo', { name: 'Leo' });
      const etag = (await call('GET', `${instances[0].api}/user`, { auth: leo })).headers.get('etag')!;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          post(instances[index % 2]!, '/user', leo, undefined, { form: { name: `Leo ${index}` }, headers: { 'if-match': etag } }),
        ),
      );
      const statuses = results.map((result) => result.status);
      assert.equal(statuses.filter((status) => status === 200).length, 1, `statuses: ${statuses.join(', ')}`);
      assert.equal(statuses.filter((status) => status === 412).length, 7, `statuses: ${statuses.join(', ')}`);
    });
  });
}

describeTwoInstances();
