// Contract cases for usage per key: flushes add up (one store and two, as instances do), reads are per account's key, days
// past retention are pruned, and a key deleted since it was counted neither fails a batch nor leaves rows behind.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';

import { issueKey } from '../../src/domain/api-keys.ts';
import type { KeyUsageBatch, KeyUsageOutcome, Store } from '../../src/store/store.ts';
import { account, domainCode, freshStore, newKey, type MakeStore } from './contract-support.ts';

const ZERO = { success: 0, client_error: 0, rate_limited: 0, refused: 0, server_error: 0 };

async function keyOf(store: Store, username: string): Promise<string> {
  const key = issueKey('live');
  await store.createKey(username, newKey(key));
  return key.keyId;
}

function counts(keyId: string, day: string, figures: Partial<Record<KeyUsageOutcome, number>>): KeyUsageBatch['counts'] {
  return Object.entries(figures).map(([outcome, count]) => ({ keyId, day, outcome: outcome as KeyUsageOutcome, count: count! }));
}

export function defineKeyUsageCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: key usage`, () => {
    test('a flush is read back per day and outcome, days without requests left out, oldest first', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const keyId = await keyOf(store, 'alice');
      await store.recordKeyUsage({
        counts: [...counts(keyId, '2026-11-26', { success: 7, rate_limited: 2 }), ...counts(keyId, '2026-11-24', { refused: 1, client_error: 3 })],
        addresses: [],
      });
      const usage = await store.readKeyUsage('ALICE', keyId, '2026-11-01');
      assert.deepEqual(usage.days, [
        { day: '2026-11-24', ...ZERO, refused: 1, client_error: 3 },
        { day: '2026-11-26', ...ZERO, success: 7, rate_limited: 2 },
      ]);
      assert.deepEqual(usage.addresses, []);
      assert.deepEqual((await store.readKeyUsage('alice', keyId, '2026-11-25')).days.map((day) => day.day), ['2026-11-26'], 'since is not honoured');
    });

    test('two flushes of the same key, day and outcome add up, through one store and through two', async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      const other = subject.openAnother();
      await store.createAccount(account('alice'));
      const keyId = await keyOf(store, 'alice');
      await store.recordKeyUsage({ counts: counts(keyId, '2026-11-26', { success: 5, refused: 1 }), addresses: [] });
      await store.recordKeyUsage({ counts: counts(keyId, '2026-11-26', { success: 3 }), addresses: [] });
      // Two instances flushing at once: neither's counts are lost.
      await Promise.all([
        other.recordKeyUsage({ counts: counts(keyId, '2026-11-26', { success: 10, refused: 2 }), addresses: [] }),
        store.recordKeyUsage({ counts: counts(keyId, '2026-11-26', { success: 100 }), addresses: [] }),
      ]);
      assert.deepEqual((await other.readKeyUsage('alice', keyId, '2026-11-26')).days, [{ day: '2026-11-26', ...ZERO, success: 118, refused: 3 }]);
    });

    test("a key's newest addresses are kept, five at most, newest first, a later sighting moving one up", async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const keyId = await keyOf(store, 'alice');
      const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 12, minute));
      const addresses = ['203.0.113.1', '203.0.113.2', '203.0.113.3', '2001:db8::4', '203.0.113.5', '203.0.113.6'];
      await store.recordKeyUsage({ counts: [], addresses: addresses.map((address, index) => ({ keyId, address, lastSeen: at(index) })) });
      // Seen again later (another instance's flush), and an older sighting never moves one back.
      await store.recordKeyUsage({ counts: [], addresses: [{ keyId, address: '203.0.113.3', lastSeen: at(30) }, { keyId, address: '203.0.113.6', lastSeen: at(0) }] });
      const usage = await store.readKeyUsage('alice', keyId, '2026-11-01');
      assert.deepEqual(usage.addresses, [
        { address: '203.0.113.3', lastSeen: at(30).toISOString() },
        { address: '203.0.113.6', lastSeen: at(5).toISOString() },
        { address: '203.0.113.5', lastSeen: at(4).toISOString() },
        { address: '2001:db8::4', lastSeen: at(3).toISOString() },
        { address: '203.0.113.2', lastSeen: at(1).toISOString() },
      ]);
    });

    test("usage is read only through the key's own account", async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      await store.createAccount(account('bob'));
      const keyId = await keyOf(store, 'alice');
      await store.recordKeyUsage({ counts: counts(keyId, '2026-11-26', { success: 1 }), addresses: [] });
      await assert.rejects(store.readKeyUsage('bob', keyId, '2026-11-01'), domainCode('key_not_found', 'not_found'));
      await assert.rejects(store.readKeyUsage('nobody', keyId, '2026-11-01'), domainCode('account_not_found', 'not_found'));
      await assert.rejects(store.readKeyUsage('alice', 'AAAABBBBCCCC', '2026-11-01'), domainCode('key_not_found', 'not_found'));
    });

    test("a key deleted since it was counted is skipped, the batch's other keys still counted; its rows go with it", async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      await store.createAccount(account('bob'));
      const kept = await keyOf(store, 'alice');
      const gone = await keyOf(store, 'bob');
      await store.recordKeyUsage({ counts: counts(gone, '2026-11-25', { success: 4 }), addresses: [{ keyId: gone, address: '203.0.113.9', lastSeen: new Date() }] });
      await store.deleteAccount('bob');
      await store.recordKeyUsage({
        counts: [...counts(gone, '2026-11-26', { success: 1 }), ...counts(kept, '2026-11-26', { success: 2 })],
        addresses: [{ keyId: gone, address: '203.0.113.9', lastSeen: new Date() }],
      });
      assert.deepEqual((await store.readKeyUsage('alice', kept, '2026-11-01')).days, [{ day: '2026-11-26', ...ZERO, success: 2 }]);
      // Nothing of the deleted key is left to prune.
      assert.equal(await store.pruneKeyUsage('2100-01-01'), 1, 'only the kept key’s one row was left');
    });

    test('pruning deletes the days before the cut-off and the addresses not seen since, and nothing newer', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const keyId = await keyOf(store, 'alice');
      await store.recordKeyUsage({
        counts: [
          ...counts(keyId, '2026-08-27', { success: 1, refused: 1 }),
          ...counts(keyId, '2026-08-28', { success: 2 }),
          ...counts(keyId, '2026-11-26', { success: 3 }),
        ],
        addresses: [
          { keyId, address: '203.0.113.1', lastSeen: new Date('2026-08-27T23:59:59.999Z') },
          { keyId, address: '203.0.113.2', lastSeen: new Date('2026-08-28T00:00:00.000Z') },
        ],
      });
      assert.equal(await store.pruneKeyUsage('2026-08-28'), 3, 'two counts of 08-27 and its address');
      const usage = await store.readKeyUsage('alice', keyId, '2026-01-01');
      assert.deepEqual(usage.days.map((day) => day.day), ['2026-08-28', '2026-11-26']);
      assert.deepEqual(usage.addresses.map((seen) => seen.address), ['203.0.113.2']);
      assert.equal(await store.pruneKeyUsage('2026-08-28'), 0, 'a second run deletes nothing');
    });

    test('pruning works in bounded batches however many rows are due', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createAccount(account('alice'));
      const keyIds = [];
      for (let i = 0; i < 3; i++) keyIds.push(await keyOf(store, 'alice'));
      // 3 keys x 5 outcomes x 400 days = 6,000 rows: more than one batch (PRUNE_BATCH_ROWS is 5,000).
      const outcomes: KeyUsageOutcome[] = ['success', 'client_error', 'rate_limited', 'refused', 'server_error'];
      const rows: KeyUsageBatch['counts'][number][] = [];
      for (const keyId of keyIds) {
        for (let day = 0; day < 400; day++) {
          const date = new Date(Date.UTC(2024, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
          for (const outcome of outcomes) rows.push({ keyId, day: date, outcome, count: 1 });
        }
      }
      await store.recordKeyUsage({ counts: rows, addresses: [] });
      assert.equal(await store.pruneKeyUsage('2100-01-01'), 6000);
      assert.deepEqual((await store.readKeyUsage('alice', keyIds[0]!, '2000-01-01')).days, []);
    });
  });
}
