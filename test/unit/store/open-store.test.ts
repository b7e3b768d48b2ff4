// Protects engine selection: the configuration's DATABASE_URL decides which store the server and the CLI get.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadConfig } from '../../../src/config.ts';
import { describeDatabase, openStore } from '../../../src/store/open-store.ts';

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

test('a database is described by where it is, never with its password', () => {
  assert.equal(
    describeDatabase({ engine: 'postgres', url: 'postgres://account_api:SECRET@db.internal:6432/account_api' }),
    'PostgreSQL at db.internal:6432/account_api',
  );
  assert.equal(describeDatabase({ engine: 'postgres', url: 'postgresql://u:SECRET@[::1]/x' }), 'PostgreSQL at [::1]:5432/x');
  assert.equal(describeDatabase({ engine: 'postgres', url: 'postgres:///db?host=/run/postgresql' }), 'PostgreSQL at /run/postgresql:5432/db');
  assert.equal(describeDatabase({ engine: 'sqlite', path: '/srv/data/a.db' }), 'SQLite at /srv/data/a.db');
});
