// Stored text that holds control characters (from an older version, or written behind the API) is printed escaped by every
// listing, so no stored value can drive the terminal: colour it, retitle it, clear it, or reorder what it shows.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { cliOk, createAccount, createWorkspace, type Workspace } from '../support/server-process.ts';

/** ESC (a colour, an OSC title ended by BEL), CR, a C1 CSI, DEL, bidi overrides and isolates, a line separator; then plain text. */
const HOSTILE = 'A\u001b[31mred\u001b]0;owned\u0007\rB\u009b2J\u007f\u202eevil\u2066x\u2069\u2028y é 😀';
/** What a person sees of it: every control a visible escape, the rest as it was. */
const SHOWN = 'A\\x1b[31mred\\x1b]0;owned\\x07\\x0dB\\x9b2J\\x7f\\u202eevil\\u2066x\\u2069\\u2028y é 😀';
/** Any control but the line feed that ends each printed line. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

let workspace: Workspace;
let endpointId: string;

before(async () => {
  workspace = createWorkspace({ WEBHOOK_ALLOW_PRIVATE: '1' });
  await createAccount(workspace, 'alice');
  await cliOk(workspace, ['keys', 'create', 'alice', '--label', 'ci']);
  await cliOk(workspace, ['admin-tokens', 'create', '--label', 'billing']);
  await cliOk(workspace, ['webhooks', 'add', 'http://127.0.0.1:9/hook', '--description', 'audit sink']);
  endpointId = JSON.parse(await cliOk(workspace, ['webhooks', 'list', '--json']))[0].endpoint_id;
  // Behind the API, which refuses these characters: straight into the file, as an older version or a hand-made UPDATE could.
  const db = new DatabaseSync(join(workspace.dir, 'live.db'));
  try {
    const now = new Date().toISOString();
    db.prepare("UPDATE accounts SET name = ? WHERE username = 'alice'").run(HOSTILE);
    db.prepare('UPDATE api_keys SET label = ?').run(HOSTILE);
    db.prepare('UPDATE admin_tokens SET label = ?').run(HOSTILE);
    db.prepare('UPDATE webhook_endpoints SET url = ?, description = ?, disabled_at = ?, disabled_reason = ?').run(`http://127.0.0.1:9/${HOSTILE}`, HOSTILE, now, HOSTILE);
    db.prepare('INSERT INTO audit_events (occurred_at, actor, action, account_id, username, changes, request_id, address) VALUES (?, ?, ?, 1, ?, ?, ?, ?)').run(
      now,
      `cli:${HOSTILE}`,
      'account.updated',
      'alice',
      JSON.stringify({ name: { old: 'Alice', new: HOSTILE } }),
      HOSTILE,
      HOSTILE,
    );
    db.prepare("INSERT INTO webhook_events (event_id, type, created_at, payload) VALUES ('evt_terminalTextTest00000', 'account.updated', ?, '{}')").run(now);
    const delivery = db
      .prepare("INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, next_attempt_at, created_at) VALUES ('evt_terminalTextTest00000', ?, 'pending', 2, ?, ?)")
      .run(endpointId, now, now);
    const attempt = db.prepare(
      "INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempted_at, status, latency_ms, response, error) VALUES (?, ?, 'evt_terminalTextTest00000', ?, ?, 5, ?, ?)",
    );
    attempt.run(delivery.lastInsertRowid, endpointId, now, 500, HOSTILE, null);
    attempt.run(delivery.lastInsertRowid, endpointId, now, null, null, HOSTILE);
  } finally {
    db.close();
  }
});

after(() => workspace.cleanup());

/** The first raw control in `output`, described, for the failure message. */
function rawControlIn(output: string): string | undefined {
  const found = RAW_CONTROL.exec(output);
  return found === null ? undefined : `U+${found[0].codePointAt(0)!.toString(16).padStart(4, '0')} at ${JSON.stringify(output.slice(Math.max(0, found.index - 20), found.index + 20))}`;
}

describe('listings for people show every control character of stored text as an escape', () => {
  const listings: ReadonlyArray<readonly string[]> = [
    ['users', 'list'],
    ['users', 'show', 'alice'],
    ['keys', 'list', 'alice'],
    ['admin-tokens', 'list'],
    ['webhooks', 'list'],
    ['audit'],
  ];
  for (const args of listings) {
    test(args.join(' '), async () => {
      const output = await cliOk(workspace, args);
      assert.equal(rawControlIn(output), undefined, `a raw control character reached the terminal:\n${output}`);
      assert.ok(output.includes(SHOWN), `the stored value should be shown with visible escapes, ${SHOWN}:\n${output}`);
    });
  }

  test('webhooks deliveries: the answer excerpt and the error', async () => {
    const output = await cliOk(workspace, ['webhooks', 'deliveries', endpointId]);
    assert.equal(rawControlIn(output), undefined, `a raw control character reached the terminal:\n${output}`);
    // The excerpt is quoted as JSON (its C0 as \u001b), the error shown as it is: both with the rest escaped.
    assert.ok(output.includes('\\u001b[31mred'), `the excerpt's ESC should be escaped:\n${output}`);
    assert.ok(output.includes('\\u202eevil'), `the excerpt's bidi override should be escaped:\n${output}`);
    assert.ok(output.includes('A\\x1b[31mred'), `the error's ESC should be escaped:\n${output}`);
  });
});

describe('--json output holds no raw control character, and parses back to the stored value', () => {
  test('users show --json', async () => {
    const output = await cliOk(workspace, ['users', 'show', 'alice', '--json']);
    assert.equal(rawControlIn(output.replaceAll('\n', '')), undefined, `a raw control character reached the terminal:\n${output}`);
    assert.equal(JSON.parse(output).name, HOSTILE, 'JSON escapes must not change the value');
  });

  for (const args of [['users', 'list'], ['keys', 'list', 'alice'], ['admin-tokens', 'list'], ['webhooks', 'list'], ['audit']]) {
    test(`${args.join(' ')} --json`, async () => {
      const output = await cliOk(workspace, [...args, '--json']);
      assert.equal(rawControlIn(output.replaceAll('\n', '')), undefined, `a raw control character reached the terminal:\n${output}`);
      assert.ok(JSON.stringify(JSON.parse(output)).includes(JSON.stringify(HOSTILE).slice(1, -1)), `the stored value should parse back unchanged:\n${output}`);
    });
  }
});
