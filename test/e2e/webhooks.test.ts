// Webhooks over real processes on SQLite and PostgreSQL: signed deliveries verified with the standardwebhooks package,
// retries while a receiver is down, no event lost to kill -9, one delivery per event with two instances, refused addresses.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { Ajv } from 'ajv';
import { call } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { cliJsonError, cliOk, createWorkspace, expectCliExit, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { eventually } from '../support/eventually.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const postgresSkip = await postgresSkipReason();

/** Seconds, not days: retries every second (ten times), leases as short as allowed, the outbox read every 100 ms. */
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
  WEBHOOK_LEASE_MS: '11000',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  LOG_LEVEL: 'warn',
  METRICS_TOKEN: 'webhooks-test-metrics-token-0123456789',
  // The secrets are sealed at rest: every delivery below is signed with a secret the server had to unseal.
  WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
};

interface Engine {
  readonly name: string;
  readonly skip: string | undefined;
  readonly instances: number;
  setUp(): Promise<{ workspace: Workspace; storedSecrets(): Promise<string[]>; cleanup(): Promise<void> }>;
}

const ENGINES: readonly Engine[] = [
  {
    name: 'SQLite',
    skip: undefined,
    instances: 1,
    setUp: async () => {
      const workspace = createWorkspace(WEBHOOK_ENV);
      const storedSecrets = async () => {
        const db = new DatabaseSync(join(workspace.dir, 'live.db'));
        try {
          return db.prepare('SELECT secret FROM webhook_endpoints').all().map((row) => String(row.secret));
        } finally {
          db.close();
        }
      };
      return { workspace, storedSecrets, cleanup: async () => workspace.cleanup() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: postgresSkip,
    instances: 2,
    setUp: async () => {
      const database = await createTestDatabase();
      const workspace = createWorkspace({ ...WEBHOOK_ENV, DATABASE_URL: database.url });
      return {
        workspace,
        storedSecrets: async () => (await database.query('SELECT secret FROM webhook_endpoints')).rows.map((row) => String(row.secret)),
        cleanup: async () => {
          workspace.cleanup();
          await database.drop();
        },
      };
    },
  },
];

for (const engine of ENGINES) {
  const { describe, test, before, after } = requiring(engine.skip);

  describe(`webhooks over ${engine.name}`, () => {
    let workspace: Workspace;
    let cleanup: () => Promise<void>;
    let storedSecrets: () => Promise<string[]>;
    let servers: ServerProcess[] = [];
    let receiver: Receiver;
    let endpointId: string;
    const cli = (args: readonly string[]) => cliOk(workspace, args);
    const startAll = async () => {
      servers = await Promise.all(Array.from({ length: engine.instances }, () => startServer(workspace)));
    };
    async function account(username: string) {
      await cli(['users', 'create', username, '--premium', '--name', 'Start']);
      return { username, key: (await cli(['keys', 'create', username])).trim() };
    }
    const eventsOf = (username: string) => receiver.received.filter((r) => r.event.data.object?.username === username);

    before(async () => {
      ({ workspace, cleanup, storedSecrets } = await engine.setUp());
      receiver = await startReceiver();
      const added = JSON.parse(await cli(['webhooks', 'add', receiver.url, '--description', 'tests', '--json']));
      assert.match(added.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      receiver.setSecret(added.secret);
      endpointId = added.endpoint_id;
      await startAll();
    });

    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await receiver.stop();
      await cleanup();
    });

    test('every audited change reaches the receiver as a Standard Webhooks delivery it verifies, with the object and the changes', async () => {
      const alice = await account('alice');
      const changed = await call('POST', `${servers[0]!.api}/user`, { auth: alice, form: { name: 'Alice Changed' } });
      assert.equal(changed.status, 200, changed.text);
      const [key] = JSON.parse(await cli(['keys', 'list', 'alice', '--json']));
      await cli(['keys', 'revoke', key.key_id]);
      await receiver.waitFor('alice: created, key created, updated, key revoked', () => eventsOf('alice').length >= 4);
      assert.deepEqual(receiver.rejected, [], 'every delivery verifies with standardwebhooks');
      const types = eventsOf('alice').map((r) => r.event.type);
      assert.deepEqual(types, ['account.created', 'key.created', 'account.updated', 'key.revoked']);
      const updated = eventsOf('alice')[2]!.event;
      assert.match(updated.id, /^evt_/);
      assert.equal(eventsOf('alice')[2]!.webhookId, updated.id, 'webhook-id is the event id');
      assert.deepEqual(updated.data.changes, { name: { old: 'Start', new: 'Alice Changed' } });
      assert.equal(updated.data.object.name, 'Alice Changed');
      assert.equal(updated.data.object.premium, true);
      const revoked = eventsOf('alice')[3]!.event;
      assert.equal(revoked.data.object.key_id, key.key_id);
      assert.notEqual(revoked.data.object.revoked_at, null);
      for (const { body } of eventsOf('alice')) assert.ok(!body.includes(alice.key), 'no delivery carries an API key');
      const [stored] = await storedSecrets();
      assert.match(stored!, /^sealed:v1:/, 'with WEBHOOK_SECRETS_KEY the database holds the secret sealed');
    });

    test('a receiver failing for a while gets every event once it answers again; the attempts show the failures', async () => {
      receiver.failWith = 503;
      const bob = await account('bob');
      for (const name of ['Bob 1', 'Bob 2', 'Bob 3']) {
        assert.equal((await call('POST', `${servers[0]!.api}/user`, { auth: bob, form: { name } })).status, 200);
      }
      await sleep(2500);
      const ready = await call('GET', `${servers[0]!.url}/readyz`);
      assert.equal(ready.status, 200, 'readiness stays green while a receiver fails');
      receiver.failWith = null;
      await receiver.waitFor('bob: 5 events', () => new Set(eventsOf('bob').map((r) => r.event.id)).size >= 5);
      const attempts = JSON.parse(await cli(['webhooks', 'deliveries', endpointId, '--json', '--limit', '1000']));
      const failed = attempts.find((attempt: any) => attempt.status === 503);
      assert.ok(failed, 'a 503 attempt is listed');
      assert.equal(failed.response, 'receiver is failing on purpose');
      assert.equal(typeof failed.latency_ms, 'number');
    });

    test('a slow receiver never slows the API', async () => {
      // The receiver holds its answers until released, not for a time: every API answer below comes while a delivery is
      // still waiting on it, however slowly a busy machine runs the test.
      const release = receiver.holdAnswers();
      try {
        const hana = await account('hana');
        await eventually('a delivery held by the receiver', () => receiver.holding, (holding) => holding > 0);
        const answered = receiver.requests;
        for (let i = 0; i < 6; i++) {
          assert.equal((await call('POST', `${servers[0]!.api}/user`, { auth: hana, form: { name: `Hana ${i}` } })).status, 200);
          assert.equal((await call('GET', `${servers[0]!.api}/user`, { auth: hana })).status, 200);
        }
        assert.ok(receiver.holding > 0, 'the receiver was still holding a delivery while the API answered');
        assert.equal(receiver.requests, answered, 'the receiver answered nothing while the API answered');
        // An API that waited on a delivery could only be answered once the sender gave up on it (its 10 s limit), which the
        // receiver would have seen as a held request abandoned.
        assert.equal(receiver.abandonedWhileHeld, 0, 'a held delivery timed out while the API answered: the API waited for it (or 12 requests took over 10 s)');
      } finally {
        release();
      }
      await receiver.waitFor('hana: every change', () => eventsOf('hana').filter((r) => r.event.type === 'account.updated').length >= 6);
    });

    test('kill -9 after the change is acknowledged and before its delivery loses no event', async () => {
      await receiver.stop();
      const carol = await account('carol');
      const names = Array.from({ length: 5 }, (_, i) => `Carol ${i}`);
      for (const name of names) assert.equal((await call('POST', `${servers[0]!.api}/user`, { auth: carol, form: { name } })).status, 200);
      await Promise.all(servers.map((server) => server.kill()));
      await receiver.start();
      await startAll();
      await receiver.waitFor('carol: every acknowledged change', () => {
        const seen = new Set(eventsOf('carol').filter((r) => r.event.type === 'account.updated').map((r) => r.event.data.changes.name?.new));
        return names.every((name) => seen.has(name));
      });
    });

    test(`${engine.instances === 2 ? 'two instances deliver' : 'serve delivers'} each event once in the normal case`, async () => {
      const dave = await account('dave');
      const writes = Array.from({ length: 20 }, (_, i) =>
        call('POST', `${servers[i % servers.length]!.api}/settings`, { auth: dave, form: { timezone: i % 2 === 0 ? 'Asia/Tokyo' : 'Europe/Paris' } }),
      );
      for (const result of await Promise.all(writes)) assert.equal(result.status, 200);
      const expected = JSON.parse(await cli(['audit', '--user', 'dave', '--json'])).length;
      await receiver.waitFor(`dave: ${expected} events`, () => eventsOf('dave').length >= expected);
      await sleep(1500);
      const ids = eventsOf('dave').map((r) => r.event.id);
      assert.equal(ids.length, new Set(ids).size, 'no event was delivered twice');
      assert.equal(ids.length, expected, 'one event per audit entry');
    });

    test('redeliver sends an event again with the same id', async () => {
      const first = receiver.received[0]!.event.id;
      const before = receiver.received.filter((r) => r.event.id === first).length;
      const queued = JSON.parse(await cli(['webhooks', 'redeliver', first, '--json']));
      assert.deepEqual(queued.endpoints, [endpointId]);
      await receiver.waitFor('the redelivery', (received) => received.filter((r) => r.event.id === first).length > before);
    });

    test('a disabled endpoint gets nothing; enabled again it does; list says why it was disabled', async () => {
      await cli(['webhooks', 'disable', endpointId]);
      const [listed] = JSON.parse(await cli(['webhooks', 'list', '--json']));
      assert.equal(listed.enabled, false);
      assert.match(listed.disabled_reason, /^disabled by cli:/);
      assert.equal('secret' in listed, false, 'list never shows the secret');
      await account('erin');
      await sleep(1000);
      assert.equal(eventsOf('erin').length, 0);
      await cli(['webhooks', 'enable', endpointId]);
      await account('frank');
      await receiver.waitFor('frank after enabling', () => eventsOf('frank').length >= 2);
      assert.equal(eventsOf('erin').length, 0, 'what happened while disabled is not queued');
    });

    test('Premium switched, a key rolled and an account deleted arrive with the object as the change left it', async () => {
      await account('gina');
      await cli(['users', 'premium', 'gina', 'off']);
      const [key] = JSON.parse(await cli(['keys', 'list', 'gina', '--json']));
      await cli(['keys', 'roll', key.key_id, '--overlap', '1h']);
      await cli(['users', 'delete', 'gina']);
      await receiver.waitFor('gina: 5 events', () => eventsOf('gina').length >= 5);
      const byType = new Map(eventsOf('gina').map((r) => [r.event.type, r.event]));
      assert.equal(byType.get('account.premium_changed')!.data.object.premium, false);
      assert.deepEqual(byType.get('account.premium_changed')!.data.changes, { premium: { old: true, new: false } });
      const rolled = byType.get('key.rolled')!;
      assert.equal(rolled.data.object.key_id, key.key_id, 'key.rolled shows the rolled key');
      assert.equal(rolled.data.object.rolled_into, rolled.data.changes.key_id!.new);
      const deleted = byType.get('account.deleted')!;
      assert.equal(deleted.data.object.username, 'gina');
      assert.equal(deleted.data.changes.name!.new, null);
    });

    test('metrics count deliveries by outcome and show the outbox', async () => {
      const samples = await Promise.all(
        servers.map(async (server) => (await call('GET', `${server.url}/metrics`, { headers: { authorization: `Bearer ${WEBHOOK_ENV.METRICS_TOKEN}` } })).text),
      );
      const total = (outcome: string) =>
        samples.reduce((sum, text) => sum + Number(new RegExp(`^account_api_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0), 0);
      assert.ok(total('succeeded') > 0, 'successes are counted');
      assert.match(samples[0]!, /^account_api_webhook_outbox_pending \d+/m);
      assert.match(samples[0]!, /^account_api_webhook_outbox_oldest_seconds \d/m);
    });

    test("every delivery received conforms to the OpenAPI document's webhooks", async () => {
      const document = (await call('GET', `${servers[0]!.api}/openapi.json`)).body;
      const ajv = new Ajv({ strict: false, validateFormats: false });
      const seen = new Set<string>();
      for (const { event } of receiver.received) {
        const schema = document.webhooks[event.type]?.post.requestBody.content['application/json'].schema;
        assert.ok(schema, `the document has no webhook ${event.type}`);
        assert.ok(ajv.validate(schema, event), `${event.type} does not match its schema: ${ajv.errorsText()}\n${JSON.stringify(event)}`);
        seen.add(event.type);
      }
      assert.ok(seen.size >= 4, `only ${[...seen].join(', ')} were checked`);
    });

    test('URLs are refused unless http(s) at a public address, also after DNS resolution, unless WEBHOOK_ALLOW_PRIVATE=1', async () => {
      const strict = { WEBHOOK_ALLOW_PRIVATE: '0' };
      for (const url of ['http://127.0.0.1:9/hooks', 'http://localhost/hooks', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest', 'ftp://example.com/x']) {
        const refused = await expectCliExit(workspace, ['webhooks', 'add', url, '--json'], 2, strict);
        assert.equal(cliJsonError(refused).code, 'invalid_webhook_url', url);
      }
      const unknown = await expectCliExit(workspace, ['webhooks', 'add', receiver.url, '--events', 'account.nope', '--json'], 2);
      assert.equal(cliJsonError(unknown).code, 'invalid_webhook_events');
    });
  });
}
