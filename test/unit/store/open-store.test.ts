// Protects engine selection: the configuration's DATABASE_URL decides which store the server and the CLI get.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadConfig } from '../../../src/config.ts';
import { openStore } from '../../../src/store/open-store.ts';

test('a postgres:// DATABASE_URL opens the PostgreSQL store, without connecting yet', async () => {
  const store = openStore(loadConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }));
  assert.equal(store.engine, 'postgres');
  await store.close();
});

test('a sqlite: DATABASE_URL opens the SQLite store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-open-'));
  try {
    const store = openStore(loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'a.db')}` }));
    assert.equal(store.engine, 'sqlite');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
