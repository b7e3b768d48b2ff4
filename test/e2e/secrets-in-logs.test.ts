// Protects the logs from secrets: whatever a client sends, and wherever it puts a key, no key, credential or key hash is written.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { issueKey } from '../../src/domain/api-keys.ts';
import { basic, call, type CallOptions } from '../support/http.ts';
import { cliOk, createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { logLines } from '../support/signals.ts';

const METRICS_TOKEN = 'metrics-token-that-must-never-be-logged-42';

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let revoked: Account;
let basicAccount: Account;

before(async () => {
  // trace: the most the server can say, so every line it could ever write is examined.
  workspace = createWorkspace({ LOG_LEVEL: 'trace', METRICS_TOKEN });
  [alice, revoked, basicAccount] = await Promise.all([
    createAccount(workspace, 'alice'),
    createAccount(workspace, 'revoked'),
    createAccount(workspace, 'basic', { premium: false }),
  ]);
  const [listed] = JSON.parse(await cliOk(workspace, ['keys', 'list', 'revoked', '--json'])) as { key_id: string }[];
  await cliOk(workspace, ['keys', 'revoke', listed!.key_id]);
  server = await startServer(workspace);
});

after(() => workspace.cleanup());

const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`).join('');

/** Sends raw bytes on a new connection and waits for the server to close it (or 2 s). */
function sendRaw(bytes: string): Promise<void> {
  return new Promise((done) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), 2000);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
  });
}

test('the database holds no key in clear, only hashes', () => {
  const files = ['live.db', 'live.db-wal'].map((name) => join(workspace.dir, name)).filter((path) => existsSync(path));
  assert.ok(files.length > 0, 'no database file to examine');
  const bytes = files.map((path) => readFileSync(path).toString('latin1')).join('');
  for (const key of [alice.key, revoked.key, basicAccount.key]) {
    const keyId = key.slice('aapi_live_'.length, 'aapi_live_'.length + 12);
    assert.ok(bytes.includes(keyId), `the key id ${keyId} is not in the files examined: are they the right ones?`);
    assert.ok(!bytes.includes(key), 'a key is stored in clear');
    assert.ok(!bytes.includes(key.slice(key.indexOf('_', 5) + 1 + 12)), "a key's secret part is stored in clear");
  }
});

test('no key, credential, key hash or metrics token appears in the server output, wherever a client puts them', async () => {
  const wrongKey = issueKey('live').token;
  const sandboxKey = issueKey('sandbox').token;
  const truncated = alice.key.slice(0, -1);
  const badChecksum = alice.key.slice(0, -1) + (alice.key.endsWith('A') ? 'B' : 'A');
  const keys = [alice.key, revoked.key, basicAccount.key, wrongKey, sandboxKey, truncated, badChecksum];
  const usernames = ['alice', 'revoked', 'basic', 'nobody', 'ALICE'];

  const requests: [string, string, CallOptions][] = [
    ['GET', '/api/v0/user', { auth: alice }],
    ['POST', '/api/v0/user', { auth: alice, form: { name: 'Alice A.' } }],
    ['POST', '/api/v0/settings', { auth: alice, json: { timezone: 'Europe/Paris' } }],
    ['GET', '/api/v0/settings/timezones', { auth: alice }],
    ['GET', '/api/v0/hello', { auth: alice }],
    ['GET', '/api/v0/user', { auth: revoked }],
    ['GET', '/api/v0/user', { auth: basicAccount }],
    ['GET', '/api/v0/user', { auth: { username: 'alice', key: wrongKey } }],
    ['GET', '/api/v0/user', { auth: { username: 'nobody', key: alice.key } }],
    ['GET', '/api/v0/user', { auth: { username: 'ALICE', key: sandboxKey } }],
    ['GET', '/api/v0/user', { auth: { username: 'alice', key: truncated } }],
    ['GET', '/api/v0/user', { auth: { username: 'alice', key: badChecksum } }],
    ['GET', '/api/v0/hello', { auth: { username: alice.key, key: alice.key } }],
    ['GET', '/api/v0/hello', { auth: { username: `alice:${alice.key}`, key: '' } }],
    ['GET', '/api/v0/user', { auth: `Bearer ${alice.key}` }],
    ['GET', '/api/v0/user', { auth: alice.key }],
    ['GET', '/api/v0/user', { auth: `Basic ${Buffer.from(`alice:${alice.key}`).toString('base64url')}` }],
    ['GET', '/api/v0/user', { auth: `Basic ${basic('alice', alice.key).slice(6, -2)}` }],
    ['POST', '/api/v0/hello', { form: { name: alice.key } }],
    ['POST', '/api/v0/hello', { json: { name: alice.key, key: alice.key } }],
    ['POST', '/api/v0/user', { auth: alice, form: `name=x&api_key=${alice.key}` }],
    ['POST', '/api/v0/user', { auth: alice, body: `{"name": "${alice.key}`, headers: { 'content-type': 'application/json' } }],
    ['POST', '/api/v0/hello', { form: { name: alice.key.repeat(400) } }],
    ['POST', '/api/v0/hello', { body: alice.key, headers: { 'content-type': 'text/plain' } }],
    ['GET', `/api/v0/user?key=${alice.key}`, { auth: alice }],
    ['GET', `/api/v0/hello?api_key=${alice.key}&auth=${encodeURIComponent(basic('alice', alice.key))}`, {}],
    ['GET', `/api/v0/${alice.key}`, {}],
    ['GET', `/${alice.key}/user`, {}],
    ['GET', `/api/v0/${percentEncoded(alice.key)}`, {}],
    ['GET', `/api/v0/${Buffer.from(`alice:${alice.key}`).toString('base64url')}`, {}],
    ['GET', `/api/v0/%zz/${alice.key}`, {}],
    ['DELETE', `/api/v0/user/${alice.key}`, { auth: alice }],
    ['GET', '/api/v0/hello', { headers: { 'x-request-id': alice.key } }],
    ['GET', '/api/v0/hello', { headers: { 'x-request-id': `trace:${alice.key}` } }],
    ['GET', '/api/v0/hello', { headers: { 'x-request-id': alice.key.slice('aapi_live_'.length) } }],
    ['GET', '/api/v0/hello', { headers: { 'x-api-key': alice.key, cookie: `key=${alice.key}`, referer: `https://x.test/?k=${alice.key}` } }],
    ['GET', '/metrics', { headers: { authorization: `Bearer ${alice.key}` } }],
    ['GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }],
    ['GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}` } }],
  ];
  for (const [method, path, options] of requests) {
    await call(method, `${server.url}${path}`, options);
  }
  // Malformed HTTP, whose parse error carries the raw request, Authorization header included.
  const credentials = basic('alice', alice.key);
  await sendRaw(`GET /api/v0/user HTTP/1.1\r\nHost: x\r\nAuthorization: ${credentials}\r\nBad Header\r\n\r\n`);
  await sendRaw(`GET /api/v0/user?key=${alice.key} HTTP/1.1\r\nAuthorization: ${credentials}\r\nContent-Length: x\r\n\r\n`);
  await sendRaw(`GET /api/v0/user HTTP/1.1\r\nAuthorization: ${credentials}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);

  // A store failure, logged with its stack, in the middle of an authenticated request.
  const db = new DatabaseSync(join(workspace.dir, 'live.db'), { timeout: 5000 });
  try {
    db.exec('DROP TABLE api_keys');
  } finally {
    db.close();
  }
  const failed = await call('GET', `${server.api}/user?key=${alice.key}`, { auth: alice });
  assert.equal(failed.status, 500, `the store failure did not happen: ${failed.text}`);

  assert.equal(await server.stop(), 0, 'the server did not stop cleanly');
  const output = server.output.join('\n');

  const forbidden = new Map<string, string>();
  for (const key of keys) {
    forbidden.set(key, 'a key');
    forbidden.set(key.slice(key.indexOf('_', 5) + 1), 'a key without its prefix');
    forbidden.set(percentEncoded(key), 'a percent-encoded key');
    for (const form of ['base64', 'base64url'] as const) {
      forbidden.set(Buffer.from(key).toString(form).replace(/=+$/, ''), `a key in ${form}`);
      for (const username of usernames) {
        forbidden.set(Buffer.from(`${username}:${key}`).toString(form).replace(/=+$/, ''), `${form} of ${username}:key`);
      }
    }
    const hash = createHash('sha256').update(key).digest();
    forbidden.set(hash.toString('hex'), 'the hex SHA-256 of a key');
    forbidden.set(hash.toString('base64').replace(/=+$/, ''), 'the base64 SHA-256 of a key');
    forbidden.set(hash.toString('base64url'), 'the base64url SHA-256 of a key');
  }
  forbidden.set(METRICS_TOKEN, 'the metrics token');
  forbidden.set(METRICS_TOKEN.slice(0, -1), 'a near-miss metrics token');

  const leaks = [...forbidden].filter(([secret]) => output.includes(secret)).map(([secret, what]) => `${what}: ${secret}`);
  assert.deepEqual(leaks, [], `secrets in the server output:\n${leaks.join('\n')}`);
  assert.doesNotMatch(output, /Basic\s+[A-Za-z0-9+/=_-]{8,}/i, "a 'Basic ' credential is in the output");
  assert.doesNotMatch(output, /aapi_(live|sandbox)_[0-9A-Za-z]/i, 'something shaped like a key is in the output');

  const lines = logLines(server);
  const completed = lines.filter((line) => line.msg === 'request completed').length;
  assert.ok(completed >= requests.length + 1, `only ${completed} 'request completed' lines for ${requests.length + 1} requests: was anything logged?`);
  console.log(
    `secrets-in-logs: scanned ${server.output.length} output lines (${lines.length} JSON log lines, ${Buffer.byteLength(output)} bytes) ` +
      `from ${requests.length + 4} requests for ${forbidden.size} forbidden strings: none found`,
  );
});
