// Test support, run as its own process: takes SQLite's write lock on a database as another program would (the CLI,
// sqlite3, a backup), writes one row, holds the lock for at least HOLD_MS and until told to let go, then commits.
// Usage: node hold-sqlite-lock.ts DATABASE_PATH HOLD_MS. Told to let go by a line on stdin, or by stdin's end (the test
// process gone): so a test decides when the lock is released, after what it checks has happened, not after a time a
// loaded machine may overrun. Writes one JSON line per event on stdout, each with `at` (Date.now(), the same clock as the
// server's log lines): `locked`, `releasing` (just before COMMIT), `released`.
import { DatabaseSync } from 'node:sqlite';

const [path, holdArgument] = process.argv.slice(2);
const holdMs = Number(holdArgument);
if (path === undefined || !Number.isInteger(holdMs) || holdMs < 0) {
  console.error('usage: node hold-sqlite-lock.ts DATABASE_PATH HOLD_MS');
  process.exit(2);
}

const say = (event: string) => console.log(JSON.stringify({ event, at: Date.now() }));

const db = new DatabaseSync(path, { timeout: 10_000 });
db.exec('BEGIN IMMEDIATE');
const now = new Date().toISOString();
db.prepare('INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)').run(
  `lock-holder-${process.pid}`,
  'lock holder',
  'UTC',
  now,
  now,
);
say('locked');
const held = new Promise((resolve) => setTimeout(resolve, holdMs));
const told = new Promise<void>((resolve) => {
  process.stdin.once('data', () => resolve());
  process.stdin.once('end', () => resolve());
});
await Promise.all([held, told]);
say('releasing');
db.exec('COMMIT');
say('released');
db.close();
process.stdin.destroy();
