// What a cached read costs on PostgreSQL + Redis (issue 28): no PostgreSQL transaction (at most 0.01 per read) and exactly one
// Redis round trip, counted on the database's own statistics and on a relay in front of Redis.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { call } from '../support/http.ts';
import { ADMIN_URL, createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { countRedisCommands, type RedisCommandCounter } from '../support/redis-command-counter.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

const skip = (await postgresSkipReason()) ?? (await redisSkipReason());
const { after, before, describe, test } = requiring(skip);

const READS = 500;
// PostgreSQL 15+ flushes an idle backend's statistics within 10 s (PGSTAT_IDLE_INTERVAL): unchanged for longer is settled.
const SETTLED_AFTER_MS = 11_000;

describe('a cached read on PostgreSQL + Redis', () => {
  let database: TestDatabase;
  let workspace: Workspace;
  let relay: RedisCommandCounter;
  let instance: ServerProcess;
  let stats: pg.Client;

  before(async () => {
    database = await createTestDatabase();
    relay = await countRedisCommands(TEST_REDIS_URL);
    // The CLI talks to Redis directly; only the instance goes through the relay.
    workspace = createWorkspace({
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: uniqueKeyPrefix(),
      // Nothing in the background while transactions are counted.
      WEBHOOK_POLL_INTERVAL_MS: '600000',
    });
    instance = await startServer(workspace, [], { REDIS_URL: relay.url });
    // Read from another database, so that reading the statistics adds no transaction to the one counted.
    stats = new pg.Client({ connectionString: ADMIN_URL });
    await stats.connect();
  });

  after(async () => {
    await instance?.stop();
    await stats?.end();
    await relay?.close();
    await database?.drop();
    workspace?.cleanup();
  });

  /** The test database's committed transactions, once no backend has any left to report. */
  async function settledTransactions(): Promise<number> {
    const read = async () =>
      Number((await stats.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [database.name])).rows[0].xact_commit);
    let last = await read();
    let since = Date.now();
    while (Date.now() - since < SETTLED_AFTER_MS) {
      await sleep(1000);
      const now = await read();
      if (now !== last) {
        last = now;
        since = Date.now();
      }
    }
    return last;
  }

  test(`${READS} reads of GET /user make at most 0.01 PostgreSQL transactions and exactly one Redis round trip each`, async () => {
    const account = await createAccount(workspace, 'reader');
    for (let i = 0; i < 4; i++) assert.equal((await call('GET', `${instance.api}/user`, { auth: account })).status, 200);
    const transactionsBefore = await settledTransactions();
    const commandsBefore = relay.commands();
    for (let i = 0; i < READS; i++) {
      const result = await call('GET', `${instance.api}/user`, { auth: account });
      assert.equal(result.status, 200, result.text);
    }
    const commands = relay.commands() - commandsBefore;
    const transactions = (await settledTransactions()) - transactionsBefore;
    assert.equal(commands, READS, `${commands} Redis commands for ${READS} reads: one round trip each is the budget`);
    assert.ok(transactions / READS <= 0.01, `${transactions} PostgreSQL transactions for ${READS} cached reads (${(transactions / READS).toFixed(3)} per read)`);
  });

  test('a key read for the first time on an instance makes two Redis round trips: spend an attempt; give it back and charge the key', async () => {
    const accounts = [];
    for (let i = 0; i < 5; i++) accounts.push(await createAccount(workspace, `cold${i}`));
    for (const account of accounts) {
      await sleep(100); // the previous answer's commands sent after it (a stamp) are not counted with this one
      const readsBefore = relay.reads();
      const commandsBefore = relay.commands();
      const result = await call('GET', `${instance.api}/user`, { auth: account });
      assert.equal(result.status, 200, result.text);
      await sleep(100);
      const commands = relay.commands() - commandsBefore;
      const reads = relay.reads() - readsBefore;
      assert.equal(commands, 3, `a first read sends three scripts (spend, refund, charge); it sent ${commands}`);
      // The refund and the charge are issued in one event-loop turn, so ioredis writes them together.
      assert.ok(reads <= 2, `the three scripts of a first read took ${reads} writes; two round trips is the budget`);
    }
  });
});
