// A migration run outside a transaction is split into statements: at a semicolon ending a line, never inside a DO block's body.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadMigrations, migrationStatements } from '../../../src/store/migrations.ts';

test('splits at semicolons ending a line, keeps a DO block whole, and leaves out comment-only pieces', () => {
  const sql = [
    '-- migrate: outside a transaction',
    '-- a comment alone',
    'CREATE TABLE a (id integer);',
    'DO $$',
    'BEGIN',
    "  EXECUTE 'SELECT 1';",
    '  PERFORM 2;',
    'END $$;',
    'CREATE INDEX CONCURRENTLY a_id',
    '  ON a (id);',
    '-- trailing comment',
  ].join('\n');
  const statements = migrationStatements(sql).map((statement) => statement.replace(/--[^\n]*\n/g, '').trim());
  assert.deepEqual(statements, ['CREATE TABLE a (id integer);', "DO $$\nBEGIN\n  EXECUTE 'SELECT 1';\n  PERFORM 2;\nEND $$;", 'CREATE INDEX CONCURRENTLY a_id\n  ON a (id);']);
});

test('only the PostgreSQL migrations that build indexes concurrently run outside a transaction', () => {
  const outside = (engine: string) =>
    loadMigrations(join(import.meta.dirname, `../../../src/store/${engine}/migrations`))
      .filter((migration) => migration.transactional === false)
      .map((migration) => migration.name);
  assert.deepEqual(outside('postgres'), ['time_partitions_prepare', 'admin_searches']);
  assert.deepEqual(outside('sqlite'), []);
  const prepare = loadMigrations(join(import.meta.dirname, '../../../src/store/postgres/migrations')).find((m) => m.name === 'time_partitions_prepare')!;
  const concurrently = migrationStatements(prepare.sql).filter((statement) => /CONCURRENTLY/.test(statement));
  assert.ok(concurrently.length >= 4 && concurrently.every((statement) => !/;\s*\S/.test(statement.trim().replace(/;$/, ''))), 'an index build shares its statement');
  const searches = loadMigrations(join(import.meta.dirname, '../../../src/store/postgres/migrations')).find((m) => m.name === 'admin_searches')!;
  assert.deepEqual(
    migrationStatements(searches.sql).map((statement) => /^(DROP|CREATE) INDEX( CONCURRENTLY)?/m.exec(statement)?.[0]),
    ['DROP INDEX CONCURRENTLY', 'CREATE INDEX CONCURRENTLY', 'CREATE INDEX', 'CREATE INDEX'],
    'each of 012\'s index statements runs on its own',
  );
});
