// Key scopes, expiry, rolls and the audit trail over real processes: the CLI, the public port, SQLite and two PostgreSQL instances.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, HANG_MS } from '../support/eventually.ts';
import { call, failureMessage, type CallResult } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { cliJsonError, cliOk, createWorkspace, expectCliExit, runCli, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const postgresSkip = await postgresSkipReason();
const OLD_ENTRY_AT = '2020-01-01T00:00:00.000Z';
const EXPIRES_HEADER = 'api-key-expires';

interface Engine {
  readonly name: string;
  readonly skip: string | undefined;
  /** A workspace over a new database, and a way to write into its audit trail behind the CLI's back. */
  setUp(): Promise<{ workspace: Workspace; addOldAuditEntry(): Promise<void>; cleanup(): Promise<void> }>;
  /** How many servers share the database: each change must be seen through every one. */
  readonly instances: number;
}

const ENGINES: readonly Engine[] = [
  {
    name: 'SQLite',
    skip: undefined,
    instances: 1,
    setUp: async () => {
      const workspace = createWorkspace();
      return {
        workspace,
        addOldAuditEntry: async () => {
          const db = new DatabaseSync(join(workspace.dir, 'live.db'));
          db.prepare("INSERT INTO audit_events (occurred_at, actor, action, username, changes) VALUES (?, 'cli:ancient', 'account.created', 'ghost', '{}')").run(
            OLD_ENTRY_AT,
          );
          db.close();
        },
        cleanup: async () => workspace.cleanup(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: postgresSkip,
    instances: 2,
    setUp: async () => {
      const database: TestDatabase = await createTestDatabase();
      const workspace = createWorkspace({ DATABASE_URL: database.url });
      return {
        workspace,
        addOldAuditEntry: async () => {
          await database.query(
            "INSERT INTO audit_events (occurred_at, actor, action, username, changes) VALUES ($1, 'cli:ancient', 'account.created', 'ghost', '{}')",
            [OLD_ENTRY_AT],
          );
        },
        cleanup: async () => {
          workspace.cleanup();
          await database.drop();
        },
      };
    },
  },
];

function keyIdOf(key: string): string {
  return key.replace(/^aapi_(live|sandbox)_/, '').slice(0, 12);
}

function expectFailure(result: CallResult, status: number, code: string, what: string): { message: string } {
  assert.equal(result.status, status, `${what}: expected ${status} ${code}, got ${result.status}: ${result.text}`);
  const message = failureMessage(result);
  assert.equal(message.code, code, `${what}: wrong code: ${result.text}`);
  return message;
}

for (const engine of ENGINES) {
  const { describe, test, before, after } = requiring(engine.skip);

  describe(`key lifecycle and audit trail over ${engine.name}`, () => {
    let workspace: Workspace;
    let servers: ServerProcess[] = [];
    let cleanup: () => Promise<void>;
    const cli = (args: readonly string[]) => cliOk(workspace, args);
    const keysJson = async (username: string) => JSON.parse(await cli(['keys', 'list', username, '--json'])) as Record<string, unknown>[];
    const auditJson = async (...args: string[]) => JSON.parse(await cli(['audit', '--json', ...args])) as Record<string, any>[];
    async function account(username: string, keyArgs: readonly string[] = []): Promise<Account> {
      await cli(['users', 'create', username, '--premium']);
      return { username, key: (await cli(['keys', 'create', username, ...keyArgs])).trim() };
    }
    /** The same call through every instance. */
    const everywhere = (method: string, path: string, auth: Account, form?: Record<string, string>) =>
      Promise.all(servers.map((server) => call(method, `${server.api}${path}`, form === undefined ? { auth } : { auth, form })));

    before(async () => {
      const setUp = await engine.setUp();
      workspace = setUp.workspace;
      cleanup = setUp.cleanup;
      await cli(['migrate']);
      await setUp.addOldAuditEntry();
      // Retention of 30 days: the 2020 entry is pruned by the servers in the background, at start.
      servers = await Promise.all(Array.from({ length: engine.instances }, () => startServer(workspace, [], { AUDIT_RETENTION_DAYS: '30' })));
    });

    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await cleanup();
    });

    test('a read key reads; on POST /user and POST /settings it is 403 insufficient_scope naming the scope needed', async () => {
      const reader = await account('reader', ['--scope', 'read']);
      for (const result of await everywhere('GET', '/user', reader)) assert.equal(result.status, 200, result.text);
      for (const result of await everywhere('GET', '/settings', reader)) assert.equal(result.status, 200, result.text);
      for (const result of await everywhere('POST', '/hello', reader, { name: 'x' })) assert.equal(result.status, 200, result.text);
      for (const result of await everywhere('POST', '/user', reader, { name: 'Changed' })) {
        const message = expectFailure(result, 403, 'insufficient_scope', 'a read key on POST /user');
        assert.match(message.message, /'write'/, 'the message should name the scope the call needs');
      }
      for (const result of await everywhere('POST', '/settings', reader, { timezone: 'Europe/Paris' })) {
        expectFailure(result, 403, 'insufficient_scope', 'a read key on POST /settings');
      }
      const read = await call('GET', `${servers[0]!.api}/user`, { auth: reader });
      assert.equal(read.body.data.name, 'reader', 'a refused write changed the name');
      const writer = { username: 'reader', key: (await cli(['keys', 'create', 'reader', '--scope', 'write'])).trim() };
      assert.equal((await call('POST', `${servers[0]!.api}/user`, { auth: writer, form: { name: 'Written' } })).status, 200);
    });

    test('HEAD reads like GET; Premium is checked before scope; an expiring key says so on a refusal too', async () => {
      await cli(['users', 'create', 'plain']);
      const plainReader = { username: 'plain', key: (await cli(['keys', 'create', 'plain', '--scope', 'read'])).trim() };
      for (const result of await everywhere('POST', '/user', plainReader, { name: 'x' })) expectFailure(result, 403, 'premium_required', 'a read key of an account without Premium');
      await cli(['users', 'create', 'soon', '--premium']);
      const soon = { username: 'soon', key: (await cli(['keys', 'create', 'soon', '--scope', 'read', '--expires-in', '3d'])).trim() };
      for (const result of await everywhere('HEAD', '/user', soon)) assert.equal(result.status, 200, 'HEAD with a read key should be allowed');
      for (const result of await everywhere('POST', '/settings', soon, { timezone: 'UTC' })) {
        expectFailure(result, 403, 'insufficient_scope', 'a read key on POST /settings');
        const warned = Date.parse(result.headers.get(EXPIRES_HEADER) ?? '');
        assert.ok(Math.abs(warned - (Date.now() + 3 * 86_400_000)) < 60_000, `a refusal should say when the key expires too: ${result.headers.get(EXPIRES_HEADER)}`);
      }
      const show = JSON.parse(await cli(['users', 'show', 'soon', '--json']));
      assert.equal(show.active_keys, 1);
    });

    test('a key expires on time, on every instance, with 401 key_expired saying when; until then answers say when it will', async () => {
      const lasting = await account('lasting');
      for (const result of await everywhere('GET', '/user', lasting)) assert.equal(result.headers.get(EXPIRES_HEADER), null, 'a key without expiry carried the header');
      // The key must be seen working before it expires: when a loaded machine took longer than the lead over a CLI start
      // and two instances' answers, they proved nothing, and it starts again with a new account and twice the lead.
      let brief: Account | undefined;
      let expiresAt = '';
      for (let leadMs = 8000; brief === undefined; leadMs *= 2) {
        assert.ok(leadMs <= HANG_MS, `a CLI start and two answers took more than ${HANG_MS / 2} ms each time: taken for a hang`);
        const username = `brief-${leadMs}`;
        await cli(['users', 'create', username, '--premium']);
        expiresAt = new Date(Date.now() + leadMs).toISOString();
        const created = await runCli(workspace, ['keys', 'create', username, '--expires-at', expiresAt]);
        if (created.code !== 0 && /is in the past/.test(created.stderr)) continue;
        assert.equal(created.code, 0, created.stderr);
        const candidate = { username, key: created.stdout.trim() };
        const results = await everywhere('GET', '/user', candidate);
        if (Date.now() >= Date.parse(expiresAt)) continue;
        for (const result of results) {
          assert.equal(result.status, 200, result.text);
          assert.equal(result.headers.get(EXPIRES_HEADER), expiresAt, 'an answer to a key with under 7 days left should say when it expires');
        }
        brief = candidate;
      }
      await sleep(Date.parse(expiresAt) - Date.now() + 50);
      for (const result of await everywhere('GET', '/user', brief)) {
        const message = expectFailure(result, 401, 'key_expired', 'a key past its expiry');
        assert.ok(message.message.includes(expiresAt), `the message should say when the key expired: ${message.message}`);
      }
      assert.equal(JSON.parse(await cli(['users', 'show', brief.username, '--json'])).active_keys, 0, 'users show counted an expired key as active');
      assert.equal((await keysJson(brief.username))[0]!.state, 'expired');
    });

    test('keys roll: the successor works at once, the old key until the overlap ends (and says so), or not at all with --overlap 0', async () => {
      const owner = await account('roller', ['--label', 'ci', '--scope', 'read']);
      const oldId = keyIdOf(owner.key);
      for (const result of await everywhere('GET', '/user', owner)) assert.equal(result.status, 200);
      const successor = { username: 'roller', key: (await cli(['keys', 'roll', oldId, '--overlap', '24h'])).trim() };
      assert.match(successor.key, /^aapi_live_[0-9A-Za-z]{50}$/, 'keys roll should print the new key alone');
      for (const result of await everywhere('GET', '/user', successor)) assert.equal(result.status, 200, result.text);
      for (const result of await everywhere('GET', '/user', owner)) {
        assert.equal(result.status, 200, 'the old key should work during the overlap');
        const warned = Date.parse(result.headers.get(EXPIRES_HEADER) ?? '');
        assert.ok(Math.abs(warned - (Date.now() + 86_400_000)) < 60_000, `the old key should say it expires in 24 h: ${result.headers.get(EXPIRES_HEADER)}`);
      }
      // A last use is written in batches, a moment after the answer (TOUCH_BATCH_MS): waited for, not raced.
      const keys = await eventually(
        "the old key's last use in keys list",
        () => keysJson('roller'),
        (listed) => typeof listed.find((k) => k.key_id === oldId)?.last_used_at === 'string',
      );
      const old = keys.find((k) => k.key_id === oldId)!;
      const next = keys.find((k) => k.key_id === keyIdOf(successor.key))!;
      assert.equal(old.rolled_into, next.key_id, 'keys list should show which key rolled into which');
      assert.deepEqual([next.label, next.scope, next.state], ['ci', 'read', 'active'], 'the successor keeps label and scope');
      assert.equal(typeof old.last_used_at, 'string', 'keys list should show the last use');

      const third = { username: 'roller', key: (await cli(['keys', 'roll', keyIdOf(successor.key), '--overlap', '0'])).trim() };
      for (const result of await everywhere('GET', '/user', successor)) expectFailure(result, 401, 'key_expired', 'a key rolled with --overlap 0');
      for (const result of await everywhere('GET', '/user', third)) assert.equal(result.status, 200, result.text);
    });

    test('keys roll of a key rolled already exits 1 with key_already_rolled naming its successor, and changes nothing', async () => {
      const owner = await account('rerolled');
      const successor = (await cli(['keys', 'roll', keyIdOf(owner.key)])).trim();
      const keysBefore = await keysJson('rerolled');
      const auditBefore = await auditJson();
      const refused = await expectCliExit(workspace, ['keys', 'roll', keyIdOf(owner.key)], 1);
      assert.match(refused.stderr, new RegExp(`already rolled into '${keyIdOf(successor)}'`), `unclear error: ${refused.stderr}`);
      assert.equal(refused.stdout, '', 'a refused roll printed a key');
      const asJson = cliJsonError(await expectCliExit(workspace, ['keys', 'roll', keyIdOf(owner.key), '--json'], 1));
      assert.equal(asJson.code, 'key_already_rolled', asJson.message);
      assert.deepEqual(await keysJson('rerolled'), keysBefore, 'a refused roll changed or issued a key');
      assert.deepEqual(await auditJson(), auditBefore, 'a refused roll was audited');
      for (const key of [owner.key, successor]) {
        for (const result of await everywhere('GET', '/user', { username: 'rerolled', key })) assert.equal(result.status, 200, result.text);
      }
    });

    test('a revocation is seen by every instance on its next request', async () => {
      const owner = await account('revoked');
      for (const result of await everywhere('GET', '/user', owner)) assert.equal(result.status, 200);
      await cli(['keys', 'revoke', keyIdOf(owner.key)]);
      for (const result of await everywhere('GET', '/user', owner)) expectFailure(result, 401, 'key_revoked', 'a revoked key');
    });

    test('bad input gets a clear error and changes nothing', async () => {
      const owner = await account('careful');
      const revokedKey = (await cli(['keys', 'create', 'careful'])).trim();
      await cli(['keys', 'revoke', keyIdOf(revokedKey)]);
      // Ahead enough for a CLI start, then waited out; when a loaded machine's CLI start outlasts the lead, the CLI refuses
      // the expiry as past, and it is asked again with twice the lead.
      let expiresAt = 0;
      let expiredKey = '';
      for (let leadMs = 5000; expiredKey === ''; leadMs *= 2) {
        assert.ok(leadMs <= HANG_MS, `a CLI start took more than ${HANG_MS / 2} ms each time: taken for a hang`);
        expiresAt = Date.now() + leadMs;
        const created = await runCli(workspace, ['keys', 'create', 'careful', '--expires-at', new Date(expiresAt).toISOString()]);
        if (created.code !== 0 && /is in the past/.test(created.stderr)) continue;
        assert.equal(created.code, 0, created.stderr);
        expiredKey = created.stdout.trim();
      }
      await sleep(Math.max(0, expiresAt - Date.now()) + 100);
      const keysBefore = await keysJson('careful');
      const auditBefore = await auditJson();
      const elevenYears = new Date(Date.now() + 11 * 365 * 86_400_000).toISOString();
      // A flag's wrong value is a wrong command line (exit 2); a key that cannot be rolled is refused by the data (exit 1).
      const cases: [string[], RegExp, number][] = [
        [['keys', 'create', 'careful', '--expires-in', '90x'], /'90x' is not a duration/, 2],
        [['keys', 'create', 'careful', '--expires-at', '2020-01-01T00:00:00Z'], /in the past/, 2],
        [['keys', 'create', 'careful', '--expires-at', elevenYears], /more than 10 years/, 2],
        [['keys', 'create', 'careful', '--expires-in', '3700d'], /longer than 10 years/, 2],
        [['keys', 'create', 'careful', '--expires-at', 'next tuesday'], /not an ISO 8601/, 2],
        [['keys', 'create', 'careful', '--scope', 'admin'], /'admin' is not a scope/, 2],
        [['keys', 'roll', keyIdOf(revokedKey)], /revoked/, 1],
        [['keys', 'roll', keyIdOf(expiredKey)], /expired at/, 1],
        [['keys', 'roll', keyIdOf(owner.key), '--overlap', '1w'], /'1w' is not a duration/, 2],
      ];
      for (const [args, message, status] of cases) {
        const result = await expectCliExit(workspace, args, status);
        assert.match(result.stderr, message, `${args.join(' ')}: unclear error`);
        assert.equal(result.stdout, '', `${args.join(' ')}: printed something on stdout`);
      }
      assert.deepEqual(await keysJson('careful'), keysBefore, 'refused input changed the keys');
      assert.deepEqual(await auditJson(), auditBefore, 'refused input was audited');
      for (const result of await everywhere('GET', '/user', owner)) assert.equal(result.status, 200, 'refused input broke the good key');
    });

    test('at most 20 unexpired keys per account: the 21st is refused with a clear message', async () => {
      await account('many');
      for (let i = 2; i <= 20; i++) await cli(['keys', 'create', 'many']);
      const refused = await expectCliExit(workspace, ['keys', 'create', 'many'], 1);
      assert.match(refused.stderr, /already has 20 keys.*revoke one first/, refused.stderr);
      assert.equal((await keysJson('many')).length, 20);
    });

    test('the audit trail records public and CLI changes with who, the fields, the request id and the address, never a key', async () => {
      const owner = await account('audited');
      const renamed = await call('POST', `${servers[0]!.api}/user`, { auth: owner, form: { name: 'New Name' } });
      assert.equal(renamed.status, 200, renamed.text);
      const moved = await call('POST', `${servers.at(-1)!.api}/settings`, { auth: owner, form: { timezone: 'Asia/Tokyo' } });
      assert.equal(moved.status, 200, moved.text);
      await cli(['users', 'premium', 'audited', 'off']);
      const entries = await auditJson('--user', 'AUDITED');
      const osUser = `cli:${userInfo().username}`;
      assert.deepEqual(
        entries.map((e) => [e.action, e.actor]),
        [
          ['account.created', osUser],
          ['key.created', osUser],
          ['account.updated', `key:${keyIdOf(owner.key)}`],
          ['account.updated', `key:${keyIdOf(owner.key)}`],
          ['account.premium_changed', osUser],
        ],
      );
      const name = entries[2]!;
      const timezone = entries[3]!;
      assert.deepEqual(name.changes, { name: { old: 'audited', new: 'New Name' } });
      assert.equal(name.request_id, renamed.headers.get('x-request-id'), 'the entry should carry the request id');
      assert.equal(name.address, '127.0.0.1', "the entry should carry the caller's address");
      assert.deepEqual(timezone.changes, { timezone: { old: 'UTC', new: 'Asia/Tokyo' } });
      assert.equal(timezone.request_id, moved.headers.get('x-request-id'));
      const everything = await cli(['audit', '--json']);
      assert.ok(!everything.includes(owner.key) && !/aapi_live_[0-9A-Za-z]{50}/.test(everything), 'the audit trail holds a key');
      const table = await cli(['audit', '--user', 'audited']);
      assert.match(table, /account\.premium_changed/);
      assert.match(table, /premium: true -> false/);
      const future = await auditJson('--since', new Date(Date.now() + 60_000).toISOString());
      assert.deepEqual(future, [], '--since should leave out older entries');
      const bad = await expectCliExit(workspace, ['audit', '--since', 'yesterday'], 2);
      assert.match(bad.stderr, /not an ISO 8601/);
    });

    test('serve prunes entries older than AUDIT_RETENTION_DAYS in the background, and only those', async () => {
      // The bound is a hang detector, not a timing check: a loaded machine may take long to get to the first pruning.
      const deadline = Date.now() + HANG_MS;
      while ((await auditJson('--user', 'ghost')).length > 0) {
        assert.ok(Date.now() < deadline, 'the 2020 entry was never pruned');
        await sleep(100);
      }
      assert.ok((await auditJson()).length > 0, 'pruning deleted recent entries');
    });
  });
}
