// Protects engine selection: the configuration's DATABASE_URL decides which store the server and the CLI get.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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

test('a server on SQLite never loads node-postgres; a PostgreSQL store loads it when opened', () => {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-open-'));
  try {
    // A process of its own: whatever else this test file imported stays out of its module cache.
    const script = `
      import { createRequire } from 'node:module';
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/pg/'));
      const { loadConfig } = await import(${JSON.stringify(new URL('../../../src/config.ts', import.meta.url).href)});
      const { openStore } = await import(${JSON.stringify(new URL('../../../src/store/open-store.ts', import.meta.url).href)});
      // The server's whole module graph (app, admin app, stores, CLI) as serve loads it.
      await import(${JSON.stringify(new URL('../../../src/server.ts', import.meta.url).href)});
      await import(${JSON.stringify(new URL('../../../src/cli/run-cli.ts', import.meta.url).href)});
      const sqlite = openStore(loadConfig({ DATABASE_URL: 'sqlite:' + process.argv[1] }));
      await sqlite.migrate();
      const before = loaded();
      const postgres = openStore(loadConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }));
      const after = loaded();
      await sqlite.close();
      await postgres.close();
      console.log(JSON.stringify({ before, after }));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script, join(dir, 'a.db')], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(output.trim().split('\n').pop()!), { before: false, after: true });
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
