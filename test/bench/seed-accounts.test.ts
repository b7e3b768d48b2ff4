// scripts/seed-accounts.ts on both engines: it migrates with the service's own command, and every key it writes out opens its
// own account on a real server (GET /api/v0/user answers 200 with that username).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { call } from '../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

const SCRIPT = join(REPO_ROOT, 'scripts/seed-accounts.ts');
const ACCOUNTS = 50;

function seed(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, output }));
  });
}

/** Seeds ACCOUNTS into `databaseUrl`, starts the service on it, and checks a sample of the written keys against it. */
async function seededKeysAuthenticate(workspace: Workspace, databaseUrl: string): Promise<void> {
  const keysFile = join(workspace.dir, 'keys.txt');
  const seeded = await seed(['--database-url', databaseUrl, '--accounts', String(ACCOUNTS), '--keys-out', keysFile, '--prefix', 'load']);
  assert.equal(seeded.code, 0, `seed-accounts exited ${seeded.code}:\n${seeded.output}`);
  const lines = readFileSync(keysFile, 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, ACCOUNTS, 'one username:key line per account');
  let server: ServerProcess | undefined;
  try {
    server = await startServer(workspace, [], { DATABASE_URL: databaseUrl });
    for (const line of [lines[0]!, lines[ACCOUNTS / 2]!, lines.at(-1)!]) {
      const [username, key] = line.split(':') as [string, string];
      const answer = await call('GET', `${server.api}/user`, { auth: { username, key } });
      assert.equal(answer.status, 200, `${username}'s seeded key was refused: ${answer.text}`);
      assert.equal(answer.body.data.username, username, `${username}'s key opened another account: ${answer.text}`);
    }
    const [username, key] = lines[1]!.split(':') as [string, string];
    const other = await call('GET', `${server.api}/user`, { auth: { username: `${username}x`, key } });
    assert.equal(other.status, 401, `a seeded key opened an account it does not belong to: ${other.text}`);
  } finally {
    await server?.stop();
  }
}

describe('seed-accounts on SQLite', () => {
  test('writes accounts whose keys authenticate against a real server', async () => {
    const workspace = createWorkspace();
    try {
      await seededKeysAuthenticate(workspace, `sqlite:${join(workspace.dir, 'seeded.db')}`);
    } finally {
      workspace.cleanup();
    }
  });
});

const postgres = requiring(await postgresSkipReason());
let database: TestDatabase;

postgres.describe('seed-accounts on PostgreSQL', () => {
  postgres.before(async () => {
    database = await createTestDatabase();
  });
  postgres.after(() => database.drop());

  postgres.test('writes accounts whose keys authenticate against a real server, and new accounts get ids after them', async () => {
    const workspace = createWorkspace();
    try {
      await seededKeysAuthenticate(workspace, database.url);
      const { rows } = await database.query("SELECT count(*)::int AS n, max(id)::int AS last FROM accounts WHERE username LIKE 'load%'");
      assert.deepEqual(rows[0], { n: ACCOUNTS, last: ACCOUNTS });
      const next = await database.query("INSERT INTO accounts (username, name, created_at, updated_at) VALUES ('after', 'After', now(), now()) RETURNING id");
      assert.equal(Number(next.rows[0].id), ACCOUNTS + 1, 'the identity sequence was left behind the seeded ids');
    } finally {
      workspace.cleanup();
    }
  });
});
