// GET /admin/v0/accounts/{username}/keys/{key_id}/usage on each engine: requests of every outcome sent to a real server are
// counted exactly, per key, and the key's address is shown; a request that proved no key counts for none.
import assert from 'node:assert/strict';
import { AdminClient } from '../../../client/src/index.ts';
import { expectData, onEveryEngine } from './admin-support.ts';
import { forgedKeyOf, NONE, send, usageAddingUpTo, type Caller } from './key-usage-support.ts';

// Flushed every 50 ms so the test waits little; a budget of 5 per key in a window of a day, so the 429s are exact. The admin
// token's budget would count every poll of the usage in that day-long window (600 is 30 s of polls): off.
const ENV = { KEY_USAGE_FLUSH_MS: '50', RATE_LIMIT_PER_KEY: '5', RATE_LIMIT_WINDOW_MS: '86400000', ADMIN_RATE_LIMIT_PER_TOKEN: '0' };

onEveryEngine(
  'usage per key',
  ({ suite: { test }, admin }) => {
    const newKey = async (username: string, premium: boolean): Promise<Caller & { keyId: string }> => {
      const server = admin();
      const made = await server.call('POST', '/accounts', { form: { username, premium: String(premium) } });
      if (made.status !== 409) expectData(made, 201);
      const issued = expectData(await server.call('POST', `/accounts/${username}/keys`, { form: {} }), 201);
      return { username, key: issued.key, keyId: issued.key_id };
    };
    const usageOf = (caller: { username: string; keyId: string }) => async () =>
      expectData(await admin().call('GET', `/accounts/${caller.username}/keys/${caller.keyId}/usage`));

    test('every outcome of a Premium key is counted exactly, with the address it came from', async () => {
      const api = admin().server.api;
      const alice = await newKey('alice', true);
      // The key's id with a wrong secret proves nothing: counted for no key. Sent first, so were it counted, it would be
      // written no later than the rest and the figures could never add up.
      await send(api, { username: 'alice', key: forgedKeyOf(alice.key) }, 'user', 2, 401);
      await send(api, alice, 'user', 3, 200);
      await send(api, alice, 'bad-timezone', 2, 400);
      // Its budget of 5 is spent: the next two are 429.
      await send(api, alice, 'user', 2, 429);
      const usage = await usageAddingUpTo("alice's key usage", usageOf(alice), { ...NONE, success: 3, client_error: 2, rate_limited: 2 });
      assert.deepEqual(usage.addresses.map((seen: { address: string }) => seen.address), ['127.0.0.1']);
      assert.ok(Date.parse(usage.addresses[0].last_seen) <= Date.now() + 1000, usage.addresses[0].last_seen);
    });

    test("a non-Premium key's 403s and a revoked key's 401s are counted as refused", async () => {
      const api = admin().server.api;
      const bob = await newKey('bob', false);
      await send(api, bob, 'hello', 1, 200);
      await send(api, bob, 'user', 2, 403);
      const carol = await newKey('carol', true);
      await send(api, carol, 'user', 1, 200);
      expectData(await admin().call('DELETE', `/keys/${carol.keyId}`));
      await send(api, carol, 'user', 2, 401);
      await usageAddingUpTo("bob's key usage", usageOf(bob), { ...NONE, success: 1, refused: 2 });
      await usageAddingUpTo("carol's revoked key usage", usageOf(carol), { ...NONE, success: 1, refused: 2 });
    });

    test('a key never used has no days and no addresses; the AdminClient reads the same', async () => {
      const dave = await newKey('dave', true);
      assert.deepEqual(await usageOf(dave)(), { days: [], addresses: [] });
      const api = admin().server.api;
      await send(api, dave, 'user', 1, 200);
      const client = new AdminClient({ baseUrl: admin().admin.replace(/\/admin\/v0$/, ''), token: admin().token });
      const read = await usageAddingUpTo("dave's key usage through AdminClient", () => client.readKeyUsage('dave', dave.keyId), { ...NONE, success: 1 });
      assert.equal(read.days.length, 1);
      assert.equal(read.days[0].day, new Date().toISOString().slice(0, 10));
    });

    test('the admin OpenAPI document describes the usage endpoint and its answer', async () => {
      const document = expectDocument(await admin().call('GET', '/openapi.json'));
      const operation = document.paths['/admin/v0/accounts/{username}/keys/{key_id}/usage']?.get;
      assert.equal(operation?.operationId, 'readKeyUsage');
      const usage = document.components.schemas.AdminKeyUsageDay;
      assert.deepEqual(Object.keys(usage.properties).sort(), ['client_error', 'day', 'rate_limited', 'refused', 'server_error', 'success']);
    });
  },
  ENV,
);

function expectDocument(result: { status: number; body: any; text: string }): any {
  assert.equal(result.status, 200, result.text);
  return result.body;
}
