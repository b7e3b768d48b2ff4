// The command line piped into a reader that stops early (`account-api audit | head -1`): it ends quietly, with status 141.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { cliOk, createWorkspace, MAIN, type Workspace } from '../support/server-process.ts';

/**
 * Rows of some 300 bytes: every listing is 300 KB or more, well past what the reader takes in one read (64 KiB) plus what the pipe
 * then holds (64 KiB on Linux), so the command is always still writing when its reader goes away.
 */
const ROWS = 1000;
const ENDPOINT_ID = 'we_closedOutputTest0';

let workspace: Workspace;

before(async () => {
  workspace = createWorkspace();
  await cliOk(workspace, ['migrate']);
  // Written straight into the file: a thousand CLI runs would take minutes, and the listing is all this test is about.
  const db = new DatabaseSync(join(workspace.dir, 'live.db'));
  try {
    const now = new Date().toISOString();
    const padding = 'x'.repeat(300);
    db.exec('BEGIN');
    const account = db.prepare('INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)');
    const audit = db.prepare('INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes) VALUES (?, ?, ?, ?, ?, ?)');
    for (let i = 1; i <= ROWS; i += 1) {
      account.run(`user-${i}`, `${padding} ${i}`, 'UTC', now, now);
      audit.run(now, 'cli:test', 'account.created', i, `user-${i}`, JSON.stringify({ name: { old: null, new: `${padding} ${i}` } }));
    }
    db.prepare('INSERT INTO webhook_endpoints (endpoint_id, url, secret, created_at) VALUES (?, ?, ?, ?)').run(ENDPOINT_ID, 'http://127.0.0.1:9/hook', 'unused', now);
    db.prepare("INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES ('evt_closedOutputTest0000', 'account.created', ?, '{}')").run(now);
    const delivery = db
      .prepare("INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at, created_at) VALUES ('evt_closedOutputTest0000', ?, 'pending', ?, ?, ?)")
      .run(ENDPOINT_ID, ROWS, now, now);
    const attempt = db.prepare(
      "INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, error) VALUES (?, ?, 'evt_closedOutputTest0000', ?, NULL, 12, ?)",
    );
    for (let i = 1; i <= ROWS; i += 1) attempt.run(delivery.lastInsertRowid, ENDPOINT_ID, now, padding);
    db.exec('COMMIT');
  } finally {
    db.close();
  }
});

after(() => workspace.cleanup());

interface PipedRun {
  readonly firstLine: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** `account-api ARGS | head -1`: reads the first line, then closes its end of the pipe, as head does. */
function runIntoHead(args: readonly string[]): Promise<PipedRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: workspace.dir, env: workspace.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let firstLine: string | undefined;
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const end = stdout.indexOf('\n');
      if (firstLine !== undefined || end < 0) return;
      firstLine = stdout.slice(0, end);
      child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ firstLine: firstLine ?? '', code, signal, stderr }));
  });
}

const COMMANDS: ReadonlyArray<readonly [readonly string[], RegExp]> = [
  [['audit'], /^WHEN +ACTOR +ACTION/],
  [['audit', '--json'], /^\[$/],
  [['users', 'list'], /^USER_ID +USERNAME/],
  [['webhooks', 'deliveries', ENDPOINT_ID, '--limit', String(ROWS)], /^WHEN +EVENT_ID +STATUS/],
];

for (const [args, first] of COMMANDS) {
  test(`account-api ${args.join(' ')} | head -1 ends quietly with status 141, nothing on stderr`, async () => {
    const run = await runIntoHead(args);
    assert.match(run.firstLine, first, `the reader should get the listing's first line: ${JSON.stringify(run)}`);
    assert.equal(run.stderr, '', `a closed stdout should end the command quietly, without a stack trace:\n${run.stderr}`);
    assert.deepEqual({ code: run.code, signal: run.signal }, { code: 141, signal: null }, `the documented status for a closed output:\n${run.stderr}`);
  });
}

test('each listing, read to the end, exits 0 and is far larger than a pipe holds', async () => {
  for (const [args] of COMMANDS) {
    const listed = await cliOk(workspace, args);
    assert.ok(Buffer.byteLength(listed) > 256 * 1024, `account-api ${args.join(' ')} printed only ${Buffer.byteLength(listed)} bytes`);
  }
  assert.equal((await cliOk(workspace, ['audit'])).trimEnd().split('\n').length, ROWS + 1, 'a header and every entry');
});
