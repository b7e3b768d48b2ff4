// Protects the audit trail's plans on SQLite: filtered by actor, action or account, it is read from an index (migrations 012
// and 003), never by walking the whole trail, which is what SQLite makes of a catch-all `(? IS NULL OR column = ?)`. PostgreSQL's are checked by test/contract/time-partitions.test.ts
// (partition pruning); its indexes' use is measured in docs/operations.md.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { after, before, test } from 'node:test';

import { selectAuditEvents } from '../../../src/store/audit/sqlite.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { AuditQuery } from '../../../src/store/store.ts';

let dir: string;
let db: DatabaseSync;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-plans-'));
  const store = new SqliteStore({ path: join(dir, 'plans.db'), environment: 'live', synchronous: 'normal', busyTimeoutMs: 2000 });
  await store.migrate();
  await store.close();
  db = new DatabaseSync(join(dir, 'plans.db'));
});

after(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The plan of the statement the store would run, and its values, as SQLite explains it. */
function planOf(run: (prepare: (sql: string) => StatementSync) => unknown): string {
  let plan = '';
  run((sql) => {
    const explain = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    return { all: (...values: never[]) => ((plan = explain.all(...values).map((row) => String(row.detail)).join('\n')), []) } as unknown as StatementSync;
  });
  return plan;
}

test('each audit filter alone reads its index, and the list without one walks the ids back', () => {
  const cases: [AuditQuery, RegExp][] = [
    [{ actor: 'admin:3kTqv9ZbW2aX' }, /USING (COVERING )?INDEX audit_events_by_actor \(actor=\?\)/],
    [{ action: 'key.revoked' }, /USING (COVERING )?INDEX audit_events_by_action \(action=\?\)/],
    [{ action: 'key.revoked', beforeId: 500, limit: 51 }, /USING (COVERING )?INDEX audit_events_by_action \(action=\? AND rowid<\?\)/],
    [{ username: 'alice' }, /USING (COVERING )?INDEX audit_events_by_username \(username=\?/],
    [{}, /SCAN audit_events/],
  ];
  for (const [query, expected] of cases) {
    const plan = planOf((prepare) => selectAuditEvents(prepare, query));
    assert.match(plan, expected, `${JSON.stringify(query)}:\n${plan}`);
    if (Object.keys(query).length > 0) assert.doesNotMatch(plan, /SCAN audit_events\b/, `${JSON.stringify(query)} walks the trail:\n${plan}`);
  }
});
