// The key usage operations: which days a read asks for (today and the 29 before it, UTC), the cut-off retention prunes
// before, and a malformed key id refused before the store is asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DomainError } from '../../../src/domain/errors.ts';
import { pruneKeyUsage, readKeyUsage } from '../../../src/operations/key-usage.ts';
import type { KeyUsageStore } from '../../../src/store/store.ts';

function recordingStore() {
  const asked: unknown[][] = [];
  const store: KeyUsageStore = {
    recordKeyUsage: async () => undefined,
    readKeyUsage: async (...args) => {
      asked.push(['read', ...args]);
      return { days: [], addresses: [] };
    },
    pruneKeyUsage: async (before) => {
      asked.push(['prune', before]);
      return 0;
    },
  };
  return { store, asked };
}

const NOW = Date.parse('2026-11-26T00:30:00Z');

test('a read asks for today and the 29 days before it, in UTC', async () => {
  const { store, asked } = recordingStore();
  await readKeyUsage(store, { username: 'alice', keyId: '3kTqv9ZbW2aX', now: NOW });
  assert.deepEqual(asked, [['read', 'alice', '3kTqv9ZbW2aX', '2026-10-28']]);
});

test('a malformed key id is refused before the store is asked', async () => {
  const { store, asked } = recordingStore();
  await assert.rejects(readKeyUsage(store, { username: 'alice', keyId: "x' OR 1=1", now: NOW }), (error) => error instanceof DomainError && error.code === 'invalid_key_id');
  assert.deepEqual(asked, []);
});

test('pruning deletes the days more than the retention before today', async () => {
  const { store, asked } = recordingStore();
  await pruneKeyUsage(store, 90, NOW);
  assert.deepEqual(asked, [['prune', '2026-08-28']]);
});
