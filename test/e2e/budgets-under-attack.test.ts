// Rate budgets as an attacker tests them: guesses sent concurrently and pipelined, keys of free accounts, floods of fresh
// addresses, IPv6 neighbours, doubled Authorization headers; on SQLite, PostgreSQL, and with Redis (one, or a Redis Cluster of
// three masters) sharing the counters.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { composeKey, parseKey } from '../../src/domain/api-keys.ts';
import { basic, call, failureMessage, type CallResult } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.ts';
import { privateRedisCluster, redisClusterSkipReason } from '../support/redis-cluster.ts';
import { pipelined, rawGet } from '../support/pipelined.ts';
import { requiring } from '../support/requiring.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const AUTH_FAILURES = 20;
const PER_KEY = 10;
const PER_ADDRESS = 5;
const GUESSES = 300;

interface Setup {
  readonly name: string;
  readonly skip: () => Promise<string | undefined>;
  /** Extra environment, and what to undo afterwards. */
  readonly prepare: () => Promise<{ env: NodeJS.ProcessEnv; cleanup: () => Promise<void> }>;
}

const setups: Setup[] = [
  { name: 'SQLite', skip: async () => undefined, prepare: async () => ({ env: {}, cleanup: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: postgresSkipReason,
    prepare: async () => {
      const database: TestDatabase = await createTestDatabase();
      return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
    },
  },
  {
    name: 'SQLite with Redis',
    skip: redisSkipReason,
    prepare: async () => ({ env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix() }, cleanup: async () => {} }),
  },
  {
    name: 'PostgreSQL with Redis',
    skip: async () => (await postgresSkipReason()) ?? (await redisSkipReason()),
    prepare: async () => {
      const database = await createTestDatabase();
      return {
        env: { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueKeyPrefix() },
        cleanup: () => database.drop(),
      };
    },
  },
  {
    name: 'PostgreSQL with a Redis Cluster',
    skip: async () => (await postgresSkipReason()) ?? (await redisClusterSkipReason()),
    prepare: async () => {
      const [database, cluster] = await Promise.all([createTestDatabase(), privateRedisCluster()]);
      return {
        env: { DATABASE_URL: database.url, REDIS_CLUSTER_NODES: cluster.seeds, REDIS_KEY_PREFIX: uniqueKeyPrefix() },
        cleanup: async () => {
          await cluster.cleanup();
          await database.drop();
        },
      };
    },
  },
];

/** A well-formed key with a real key id and a wrong secret: every guess costs the server a real key check. */
function wrongSecretFor(account: Account): string {
  const parsed = parseKey(account.key);
  if (!parsed.ok) throw new Error('the test account has a malformed key');
  return composeKey('live', parsed.key.keyId, randomBytes(24).toString('base64').replace(/[^0-9A-Za-z]/g, 'x').slice(0, 32)).token;
}

const from = (address: string) => ({ 'x-forwarded-for': address });

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

for (const setup of setups) {
  const { after, before, describe, test } = requiring(await setup.skip());
  describe(`rate budgets under attack: ${setup.name}`, () => {
    let workspace: Workspace;
    let server: ServerProcess;
    let cleanup: () => Promise<void>;
    let alice: Account;
    let free: Account;

    before(async () => {
      const prepared = await setup.prepare();
      cleanup = prepared.cleanup;
      workspace = createWorkspace({
        ...prepared.env,
        RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
        RATE_LIMIT_PER_KEY: String(PER_KEY),
        RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
        // Small, so that a flood of a few hundred addresses is past the cap (it only applies without Redis).
        RATE_LIMIT_MAX_WINDOWS: '50',
        // The tests play many clients by sending X-Forwarded-For from the trusted loopback proxy.
        TRUST_PROXY: '127.0.0.1',
      });
      alice = await createAccount(workspace, 'alice');
      free = await createAccount(workspace, 'freeloader', { premium: false });
      server = await startServer(workspace);
    });

    after(async () => {
      await server?.stop();
      workspace?.cleanup();
      await cleanup?.();
    });

    test(`${GUESSES} concurrent guesses from one address get at most ${AUTH_FAILURES} real key checks`, async () => {
      const auth = basic(alice.username, wrongSecretFor(alice));
      const answers = await Promise.all(
        Array.from({ length: GUESSES }, () => call('GET', `${server.api}/user`, { headers: { authorization: auth, ...from('198.51.100.1') } })),
      );
      const counts = tally(answers.map((answer) => answer.status));
      console.log(`${setup.name}: ${GUESSES} concurrent guesses -> ${JSON.stringify(counts)}`);
      assert.deepEqual(Object.keys(counts).sort(), ['401', '429'], `answers other than 401 and 429: ${JSON.stringify(counts)}`);
      assert.equal(counts[401], AUTH_FAILURES, `${counts[401]} guesses were checked against the store; the budget is ${AUTH_FAILURES}`);
      for (const answer of answers.filter((answer) => answer.status === 429)) {
        assert.equal(failureMessage(answer).code, 'too_many_failed_attempts');
      }
    });

    test(`${GUESSES} guesses pipelined on one connection get at most ${AUTH_FAILURES} real key checks`, async () => {
      const request = rawGet('/api/v0/user', { Authorization: basic(alice.username, wrongSecretFor(alice)), ...from('198.51.100.2') });
      const statuses = await pipelined(server.url, Array.from({ length: GUESSES }, () => request));
      const counts = tally(statuses);
      console.log(`${setup.name}: ${GUESSES} pipelined guesses -> ${JSON.stringify(counts)}`);
      assert.equal(statuses.length, GUESSES, `only ${statuses.length} of ${GUESSES} pipelined requests were answered`);
      assert.equal(counts[401], AUTH_FAILURES, `${counts[401]} pipelined guesses were checked; the budget is ${AUTH_FAILURES}`);
      assert.equal(counts[429], GUESSES - AUTH_FAILURES);
    });

    test('the account holder behind the same address keeps working after 100 failed attempts from it', async () => {
      const office = from('198.51.103.1');
      assert.equal((await call('GET', `${server.api}/user`, { auth: alice, headers: office })).status, 200);
      const auth = basic(alice.username, wrongSecretFor(alice));
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) statuses.push((await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...office } })).status);
      assert.deepEqual(tally(statuses), { 401: AUTH_FAILURES, 429: 100 - AUTH_FAILURES });
      const holder = await call('GET', `${server.api}/settings`, { auth: alice, headers: office });
      assert.equal(holder.status, 200, `the valid key was refused after others' guesses from its address: ${holder.text}`);
    });

    test('a key of an account without Premium spends its budget on the 403s, then gets 429', async () => {
      const answers: CallResult[] = [];
      // Spread over addresses: it is the key's budget that must stop it, not an address's.
      for (let i = 0; i < PER_KEY + 5; i++) answers.push(await call('GET', `${server.api}/user`, { auth: free, headers: from(`198.51.101.${i}`) }));
      const statuses = answers.map((answer) => answer.status);
      assert.deepEqual(statuses, [...Array<number>(PER_KEY).fill(403), ...Array<number>(5).fill(429)]);
      assert.equal(answers[0]!.headers.get('ratelimit-limit'), String(PER_KEY), 'a 403 shows the budget it spent');
      assert.equal(answers[PER_KEY - 1]!.headers.get('ratelimit-remaining'), '0');
      assert.equal(failureMessage(answers[PER_KEY]!).code, 'rate_limited');
      const concurrent = await Promise.all(Array.from({ length: 50 }, () => call('GET', `${server.api}/settings`, { auth: free, headers: from('198.51.101.99') })));
      assert.ok(concurrent.every((answer) => answer.status === 429), 'a spent key was served a 403 (a store read) again');
    });

    test('a flood of fresh addresses does not give a throttled address a fresh budget', async () => {
      const victim = from('198.51.102.1');
      const auth = basic(alice.username, wrongSecretFor(alice));
      for (let i = 0; i < AUTH_FAILURES; i++) assert.equal((await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...victim } })).status, 401);
      for (let i = 0; i < PER_ADDRESS; i++) assert.equal((await call('GET', `${server.api}/hello`, { headers: victim })).status, 200);
      assert.equal((await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...victim } })).status, 429);
      assert.equal((await call('GET', `${server.api}/hello`, { headers: victim })).status, 429);

      const flood = Array.from({ length: 400 }, (_, i) => `203.0.${Math.floor(i / 250)}.${i % 250}`);
      for (let start = 0; start < flood.length; start += 50) {
        await Promise.all(
          flood.slice(start, start + 50).flatMap((address) => [
            call('GET', `${server.api}/hello`, { headers: from(address) }),
            call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...from(address) } }),
          ]),
        );
      }
      const guess = await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...victim } });
      assert.equal(guess.status, 429, `after the flood the throttled address was checked again (${guess.status})`);
      assert.equal(failureMessage(guess).code, 'too_many_failed_attempts');
      const hello = await call('GET', `${server.api}/hello`, { headers: victim });
      assert.equal(hello.status, 429, `after the flood the address had its /hello budget back (${hello.status})`);
    });

    test('IPv6 addresses of one /64 share a budget; another /64 has its own', async () => {
      const auth = basic(alice.username, wrongSecretFor(alice));
      for (let i = 1; i <= AUTH_FAILURES; i++) {
        const answer = await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...from(`2001:db8:5:6::${i.toString(16)}`) } });
        assert.equal(answer.status, 401, `guess ${i}`);
      }
      const sameSubnet = await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...from('2001:db8:5:6:ffff:1:2:3') } });
      assert.equal(sameSubnet.status, 429, 'another address of the same /64 got a fresh budget');
      const otherSubnet = await call('GET', `${server.api}/hello`, { headers: { authorization: auth, ...from('2001:db8:5:7::1') } });
      assert.equal(otherSubnet.status, 401, 'a neighbouring /64 shares the budget');
    });

    test('two Authorization headers are refused with 400 duplicate_header, whichever comes first', async () => {
      for (const order of [[alice.key, 'wrong'], ['wrong', alice.key]]) {
        const request = `GET /api/v0/user HTTP/1.1\r\nHost: localhost\r\n${order.map((key) => `Authorization: ${basic(alice.username, key)}\r\n`).join('')}Connection: close\r\n\r\n`;
        const [status] = await pipelined(server.url, [request]);
        assert.equal(status, 400, `${order.join(' then ')}: answered ${status}`);
      }
      const raw = await new Promise<string>((done, fail) => {
        const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () =>
          socket.write(`GET /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nauthorization: ${basic(alice.username, alice.key)}\r\nAUTHORIZATION: ${basic(alice.username, alice.key)}\r\nConnection: close\r\n\r\n`),
        );
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        socket.on('error', fail).on('close', () => done(text));
      });
      const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { status: string; messages: { code: string }[] };
      assert.equal(body.status, 'fail');
      assert.equal(body.messages[0]?.code, 'duplicate_header', 'even two identical headers in any case are refused');
    });
  });
}
