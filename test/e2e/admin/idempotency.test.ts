// Idempotency-Key on every admin write, over a real serve with ADMIN_PORT on SQLite and on PostgreSQL: a retried issue, roll,
// creation or deletion is done once and answered again byte for byte; keys are per admin token and never the public port's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseAdminToken } from '../../../src/domain/admin-tokens.ts';
import { fingerprint } from '../../../src/http/writes/idempotency.ts';
import { call, type CallOptions, type CallResult } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { requiring } from '../../support/requiring.ts';
import { bearer, expectData, expectFailure, makeAdminToken, startAdminServer, type AdminServer } from './admin-support.ts';
import { assertRanOnce, assertReplayOf } from './idempotency-support.ts';

interface Engine {
  readonly name: string;
  readonly skip: string | undefined;
  setUp(): Promise<{
    database: TestDatabase | null;
    /** Writes, behind the server's back, the claim another instance would hold while its request with this key runs. */
    holdKey(server: AdminServer, key: string, fingerprint: string): Promise<void>;
    /** The bodies of the kept admin answers, as the database holds them. */
    keptBodies(server: AdminServer): Promise<Buffer[]>;
    drop(): Promise<void>;
  }>;
}

const ENGINES: readonly Engine[] = [
  {
    name: 'SQLite',
    skip: undefined,
    setUp: async () => ({
      database: null,
      holdKey: async (server, key, held) => {
        const db = new DatabaseSync(join(server.workspace.dir, 'live.db'), { timeout: 5000 });
        try {
          db.prepare(
            `INSERT INTO admin_idempotency_keys (token_id, key, fingerprint, token, locked_until, expires_at) VALUES (?, ?, ?, 'elsewhere', ?, ?)`,
          ).run(parseAdminToken(server.token)!.tokenId, key, held, Date.now() + 60_000, Date.now() + 60_000);
        } finally {
          db.close();
        }
      },
      keptBodies: async (server) => {
        const db = new DatabaseSync(join(server.workspace.dir, 'live.db'), { timeout: 5000, readOnly: true });
        try {
          return db.prepare('SELECT body FROM admin_idempotency_keys WHERE body IS NOT NULL').all().map((row) => Buffer.from(row.body as Uint8Array));
        } finally {
          db.close();
        }
      },
      drop: async () => undefined,
    }),
  },
  {
    name: 'PostgreSQL',
    skip: await postgresSkipReason(),
    setUp: async () => {
      const database = await createTestDatabase();
      return {
        database,
        holdKey: async (server, key, held) => {
          await database.query(
            `INSERT INTO admin_idempotency_keys (token_id, key, fingerprint, token, locked_until, expires_at)
             VALUES ($1, $2, $3, 'elsewhere', now() + interval '1 minute', now() + interval '1 minute')`,
            [parseAdminToken(server.token)!.tokenId, key, held],
          );
        },
        keptBodies: async () => (await database.query('SELECT body FROM admin_idempotency_keys WHERE body IS NOT NULL')).rows.map((row) => row.body as Buffer),
        drop: () => database.drop(),
      };
    },
  },
];

const keyed = (key: string, options: CallOptions = {}): CallOptions => ({ ...options, headers: { ...options.headers, 'idempotency-key': key } });

for (const engine of ENGINES) {
  const { after, before, describe, test } = requiring(engine.skip);
  describe(`Idempotency-Key on the admin API over ${engine.name}`, () => {
    let server: AdminServer;
    let setUp: Awaited<ReturnType<Engine['setUp']>>;

    before(async () => {
      setUp = await engine.setUp();
      // Webhook endpoints on loopback (never resolved elsewhere), and nothing to deliver them to: no event is awaited here.
      server = await startAdminServer(setUp.database, { WEBHOOK_ALLOW_PRIVATE: '1' });
    });

    after(async () => {
      await server?.stop();
      await setUp?.drop();
    });

    const keysOf = async (username: string) => expectData(await server.call('GET', `/accounts/${username}/keys`)) as { key_id: string; rolled_into: string | null }[];
    const audited = async (username: string, action: string) =>
      (expectData(await server.call('GET', `/audit?username=${username}&limit=100`)) as { action: string }[]).filter((entry) => entry.action === action);

    test('a key issue retried with its Idempotency-Key answers the very same key, byte for byte, and issues one', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'alice' } }), 201);
      const key = randomUUID();
      const first = await server.call('POST', '/accounts/alice/keys', keyed(key, { form: { label: 'billing' } }));
      const issued = expectData(first, 201);
      const retry = await server.call('POST', '/accounts/alice/keys', keyed(key, { form: { label: 'billing' } }));
      assertReplayOf(retry, first, 'the retried issue');
      assert.equal(retry.body.data.key, issued.key, 'the retry answered another key');
      assert.deepEqual((await keysOf('alice')).map((each) => each.key_id), [issued.key_id], 'the retry issued a second key');
      assert.equal((await audited('alice', 'key.created')).length, 1, 'the retry was audited as another issue');
    });

    test('a roll retried makes one successor; a revocation retried answers the first revocation', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'bob' } }), 201);
      const old = expectData(await server.call('POST', '/accounts/bob/keys', keyed(randomUUID())), 201);
      const key = randomUUID();
      const first = await server.call('POST', `/keys/${old.key_id}/roll`, keyed(key, { json: { overlap: '1h' } }));
      const rolled = expectData(first);
      // The same parameters as a form: the same request.
      assertReplayOf(await server.call('POST', `/keys/${old.key_id}/roll`, keyed(key, { form: { overlap: '1h' } })), first, 'the retried roll');
      const keys = await keysOf('bob');
      assert.deepEqual(keys.map((each) => each.key_id).sort(), [old.key_id, rolled.successor.key_id].sort(), 'the retry rolled again');
      const revocation = randomUUID();
      const revoked = await server.call('DELETE', `/keys/${rolled.successor.key_id}`, keyed(revocation));
      expectData(revoked);
      assertReplayOf(await server.call('DELETE', `/keys/${rolled.successor.key_id}`, keyed(revocation)), revoked, 'the retried revocation');
    });

    test('an account creation retried is its first 201 again, not 409 username_taken; a change and a deletion retried likewise', async () => {
      const key = randomUUID();
      const first = await server.call('POST', '/accounts', keyed(key, { json: { username: 'carol', premium: true } }));
      expectData(first, 201);
      assertReplayOf(await server.call('POST', '/accounts', keyed(key, { form: { username: 'carol', premium: 'true' } })), first, 'the retried creation');
      const change = randomUUID();
      const changed = await server.call('PATCH', '/accounts/carol', keyed(change, { form: { name: 'Carol' } }));
      expectData(changed);
      expectData(await server.call('PATCH', '/accounts/carol', { form: { name: 'Caroline' } }));
      // The retry is answered as first, and does not write 'Carol' over 'Caroline'.
      assertReplayOf(await server.call('PATCH', '/accounts/carol', keyed(change, { form: { name: 'Carol' } })), changed, 'the retried change');
      assert.equal(expectData(await server.call('GET', '/accounts/carol')).name, 'Caroline');
      const deletion = randomUUID();
      const deleted = await server.call('DELETE', '/accounts/carol', keyed(deletion));
      expectData(deleted);
      assertReplayOf(await server.call('DELETE', '/accounts/carol', keyed(deletion)), deleted, 'the retried deletion');
    });

    test('a webhook endpoint registered twice with one key is one endpoint, with one secret', async () => {
      const key = randomUUID();
      const form = { url: 'http://127.0.0.1:9/account-api', description: 'billing' };
      const first = await server.call('POST', '/webhooks', keyed(key, { form }));
      const endpoint = expectData(first, 201);
      assertReplayOf(await server.call('POST', '/webhooks', keyed(key, { form })), first, 'the retried registration');
      const listed = expectData(await server.call('GET', '/webhooks')) as { endpoint_id: string }[];
      assert.deepEqual(listed.map((each) => each.endpoint_id), [endpoint.endpoint_id], 'the retry registered a second endpoint');
    });

    test('the same key with another body or path is 422 idempotency_key_reused, and does nothing', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'dave' } }), 201);
      expectData(await server.call('POST', '/accounts', { form: { username: 'erin' } }), 201);
      const key = randomUUID();
      expectData(await server.call('POST', '/accounts/dave/keys', keyed(key, { form: { label: 'one' } })), 201);
      const reused = expectFailure(await server.call('POST', '/accounts/dave/keys', keyed(key, { form: { label: 'two' } })), 422, 'idempotency_key_reused');
      assert.equal(reused.field, 'Idempotency-Key');
      expectFailure(await server.call('POST', '/accounts/erin/keys', keyed(key, { form: { label: 'one' } })), 422, 'idempotency_key_reused');
      expectFailure(await server.call('DELETE', '/accounts/dave', keyed(key)), 422, 'idempotency_key_reused');
      assert.equal((await keysOf('dave')).length, 1);
      assert.equal((await keysOf('erin')).length, 0);
      expectData(await server.call('GET', '/accounts/dave'));
    });

    test('a key another request still holds is 409 idempotency_key_in_use, and does nothing; another request with it is 422', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'frank' } }), 201);
      await setUp.holdKey(server, 'held-elsewhere', fingerprint('POST', '/admin/v0/accounts/frank/keys', undefined, { label: 'ci' }));
      expectFailure(await server.call('POST', '/accounts/frank/keys', keyed('held-elsewhere', { form: { label: 'ci' } })), 409, 'idempotency_key_in_use');
      expectFailure(await server.call('POST', '/accounts/frank/keys', keyed('held-elsewhere', { form: { label: 'cd' } })), 422, 'idempotency_key_reused');
      assert.equal((await keysOf('frank')).length, 0);
    });

    test('concurrent issues with one key: exactly one runs, every other gets 409 or, once it is answered, its answer', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'grace' } }), 201);
      const key = randomUUID();
      const results = await Promise.all(Array.from({ length: 12 }, () => server.call('POST', '/accounts/grace/keys', keyed(key, { form: { label: 'once' } }))));
      const ran = assertRanOnce(results, 201);
      assert.deepEqual((await keysOf('grace')).map((each) => each.key_id), [ran.body.data.key_id]);
    });

    test('a request refused by its own rules (404) is kept and replayed; a 409 conflict is not, so a retry runs again', async () => {
      const missing = randomUUID();
      const first = await server.call('POST', '/accounts/nobody/keys', keyed(missing));
      expectFailure(first, 404, 'account_not_found');
      expectData(await server.call('POST', '/accounts', { form: { username: 'nobody' } }), 201);
      assertReplayOf(await server.call('POST', '/accounts/nobody/keys', keyed(missing)), first, 'the kept 404');
      assert.equal((await keysOf('nobody')).length, 0);
      const taken = randomUUID();
      expectFailure(await server.call('POST', '/accounts', keyed(taken, { form: { username: 'nobody' } })), 409, 'username_taken');
      expectData(await server.call('DELETE', '/accounts/nobody'));
      expectData(await server.call('POST', '/accounts', keyed(taken, { form: { username: 'nobody' } })), 201);
    });

    test('a malformed Idempotency-Key is 400 invalid_idempotency_key, and does nothing; a GET ignores the header', async () => {
      // fetch sends only Latin-1 header values; é (0xE9) is one, and not printable ASCII.
      for (const bad of ['', 'x'.repeat(256), 'tab\there', 'clé']) {
        const result = await server.call('POST', '/accounts', { form: { username: 'heidi' }, headers: { 'idempotency-key': bad } });
        expectFailure(result, 400, 'invalid_idempotency_key');
      }
      expectFailure(await server.call('GET', '/accounts/heidi'), 404, 'account_not_found');
      expectData(await server.call('GET', '/accounts?limit=1', keyed('')));
    });

    test('a kept answer is sealed in the database: the key it issued cannot be read there, only replayed with the token', async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'kept' } }), 201);
      const key = randomUUID();
      const issued = expectData(await server.call('POST', '/accounts/kept/keys', keyed(key)), 201);
      const bodies = await setUp.keptBodies(server);
      assert.ok(bodies.length > 0, 'no kept answer in the database');
      for (const body of bodies) {
        assert.ok(!body.includes(issued.key), 'the issued key is readable in the database');
        assert.ok(!body.includes('"status"'), `a kept answer is stored as sent: ${body.toString().slice(0, 80)}`);
      }
      assert.equal(expectData(await server.call('POST', '/accounts/kept/keys', keyed(key)), 201).key, issued.key);
    });

    test("keys are per admin token: another token's same key and request runs anew", async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'ivan' } }), 201);
      const other = await makeAdminToken(server.workspace, 'another system');
      const key = randomUUID();
      const mine = expectData(await server.call('POST', '/accounts/ivan/keys', keyed(key)), 201);
      const theirs = await call('POST', `${server.admin}/accounts/ivan/keys`, keyed(key, { auth: bearer(other) }));
      assert.equal(theirs.headers.get('idempotent-replayed'), null, "another token was given this token's answer");
      assert.notEqual(expectData(theirs, 201).key, mine.key);
      assert.equal((await keysOf('ivan')).length, 2);
    });

    test("the public port's keys and the admin port's never meet: the same key value is a request of its own on each", async () => {
      expectData(await server.call('POST', '/accounts', { form: { username: 'judy', premium: 'true' } }), 201);
      const apiKey = expectData(await server.call('POST', '/accounts/judy/keys'), 201).key as string;
      const key = randomUUID();
      const adminFirst = await server.call('POST', '/accounts/judy/keys', keyed(key));
      expectData(adminFirst, 201);
      const publicCall = () => call('POST', `${server.server.api}/user`, keyed(key, { auth: { username: 'judy', key: apiKey }, form: { name: 'Judy P' } }));
      const publicFirst = await publicCall();
      assert.equal(publicFirst.status, 200, `the public port did not run its own request: ${publicFirst.text}`);
      assert.equal(publicFirst.headers.get('idempotent-replayed'), null, "the public port replayed the admin port's answer");
      assertReplayOf(await publicCall(), publicFirst, 'the public retry');
      assertReplayOf(await server.call('POST', '/accounts/judy/keys', keyed(key)), adminFirst, 'the admin retry');
    });

    test('the admin document gives every write the Idempotency-Key header, its 409 and its 422', async () => {
      const document = (await call('GET', `${server.admin}/openapi.json`)).body;
      const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((methods) => Object.entries(methods));
      const writes = operations.filter(([method]) => ['post', 'patch', 'put', 'delete'].includes(method));
      assert.ok(writes.length >= 10, `only ${writes.length} writes documented`);
      for (const [method, operation] of writes) {
        const header = (operation.parameters ?? []).find((parameter: any) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
        assert.ok(header !== undefined, `${method} ${operation.operationId} does not document Idempotency-Key`);
        assert.ok(operation.responses['409'] && operation.responses['422'], `${operation.operationId} does not document 409 and 422`);
      }
      for (const [method, operation] of operations.filter(([method]) => method === 'get')) {
        assert.ok(!(operation.parameters ?? []).some((parameter: any) => parameter.name === 'Idempotency-Key'), `${method} ${operation.operationId} documents it`);
      }
      const conflicts = document.components.schemas.AdminFailure409.properties.messages.items.properties.code.enum;
      assert.ok(conflicts.includes('idempotency_key_in_use'), `409 codes: ${conflicts}`);
    });
  });
}
