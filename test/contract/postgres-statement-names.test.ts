// Protects the names of the PostgreSQL engine's prepared statements: one name never means two statements, whichever process
// prepared it and in whatever order it first ran its statements (a pooler or a shared server connection sees them all).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.ts';
import { createTestDatabase, postgresSkipReason } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

const { describe, test } = requiring(await postgresSkipReason());

const ONE = 'SELECT $1::int AS n';
const OTHER = 'SELECT $1::text AS t';

describe('prepared statement names on PostgreSQL', () => {
  test('two processes that run the same statements in a different order give each statement the same name, and never one name to two', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());

    /** Configured as a direct connection (PG_POOLER=none) configures it, on one connection so its session shows them all. */
    function engine(context: TestContext): PostgresEngine {
      const settings = loadConfig({ DATABASE_URL: database.url }).postgres;
      assert.equal(settings.preparedStatements, true, 'test setup: named statements should be on for a direct connection');
      const made = new PostgresEngine({ ...settings, url: database.url, poolMax: 1 });
      context.after(() => made.close());
      return made;
    }

    /** The session's prepared statements, text by name (pg_prepared_statements is per session). */
    async function prepared(of: PostgresEngine): Promise<Map<string, string>> {
      const rows = await of.query('SELECT name, statement FROM pg_prepared_statements');
      return new Map(rows.map((row) => [String(row.name), String(row.statement)]));
    }

    const [first, second] = [engine(t), engine(t)];
    assert.equal((await first.one(ONE, [1]))?.n, 1);
    assert.equal((await first.one(OTHER, ['a']))?.t, 'a');
    assert.equal((await second.one(OTHER, ['b']))?.t, 'b');
    assert.equal((await second.one(ONE, [2]))?.n, 2);

    const byFirst = await prepared(first);
    const bySecond = await prepared(second);
    assert.deepEqual([...byFirst.values()].sort(), [ONE, OTHER].sort(), 'test setup: the first engine prepared something else');
    assert.deepEqual([...bySecond.values()].sort(), [ONE, OTHER].sort(), 'test setup: the second engine prepared something else');
    for (const [name, text] of bySecond) {
      assert.equal(byFirst.get(name), text, `"${name}" is ${JSON.stringify(byFirst.get(name))} in one process and ${JSON.stringify(text)} in the other`);
    }
    assert.equal(new Set(byFirst.keys()).size, 2, 'two statements share a name');
  });
});
