// The admin port's failed-attempt budget against its own operators: a valid token is served however many wrong ones came from
// its address (loopback by default, so every tool on the host shares one), pipelined or not; wrong ones still meet the 429.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { issueAdminToken } from '../../../src/domain/admin-tokens.ts';
import { call, type CallResult } from '../../support/http.ts';
import { cliOk, createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure, makeAdminToken } from './admin-support.ts';

const AUTH_FAILURES = 20;

/** Every test plays callers of its own address (X-Forwarded-For from the trusted loopback proxy), so budgets never mix. */
const from = (address: string) => ({ 'x-forwarded-for': address });

function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** Writes `count` GETs of `url` on one connection at once and returns the status of each answer, in order. */
function pipelined(url: string, count: number, headers: Record<string, string>): Promise<number[]> {
  const { hostname, port, pathname } = new URL(url);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const request = `GET ${pathname} HTTP/1.1\r\nHost: localhost\r\n${lines.join('')}\r\n`;
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname, () => socket.write(request.repeat(count)));
    let received = '';
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (statuses().length >= count) socket.end();
    });
    socket.on('error', fail);
    socket.on('close', () => done(statuses()));
  });
}

describe('the admin port: a valid token against its address\'s failed attempts', () => {
  let workspace: Workspace;
  let server: ServerProcess;
  let admin: string;
  let token: string;

  const get = (auth: string, address: string): Promise<CallResult> => call('GET', `${admin}/accounts`, { auth, headers: from(address) });
  /** Spends the address's whole budget with well-formed wrong tokens (each 401), then shows the next one is refused 429. */
  async function lockOut(address: string): Promise<void> {
    for (let i = 0; i < AUTH_FAILURES; i++) expectFailure(await get(bearer(issueAdminToken().token), address), 401, 'invalid_admin_token');
    expectFailure(await get(bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
  }

  before(async () => {
    workspace = createWorkspace({
      ADMIN_PORT: '0',
      RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
      // Long enough that no window ends while a test runs, however slow the machine.
      RATE_LIMIT_WINDOW_MS: '3600000',
      TRUST_PROXY: '127.0.0.1',
    });
    token = await makeAdminToken(workspace, 'billing');
    server = await startServer(workspace);
    admin = adminUrlOf(server);
  });

  after(async () => {
    await server?.stop();
    workspace?.cleanup();
  });

  test('after 20 wrong tokens from its address, the token just used is still served; wrong ones still get 429', async () => {
    const address = '198.51.100.1';
    expectData(await get(bearer(token), address));
    await lockOut(address);
    expectData(await get(bearer(token), address));
    // Serving the valid token gave the guessers nothing back: the next wrong token, malformed or not, is still refused.
    const refused = expectFailure(await get(bearer(issueAdminToken().token), address), 429, 'too_many_failed_attempts');
    assert.match(refused.message, /Too many failed authentication attempts/);
    expectFailure(await get('Bearer aapi_admin_nonsense', address), 429, 'too_many_failed_attempts');
    expectData(await get(bearer(token), address));
  });

  test('the first request of a token never used before is served from a locked-out address', async () => {
    const address = '198.51.100.2';
    await lockOut(address);
    const fresh = await makeAdminToken(workspace, 'support');
    expectData(await get(bearer(fresh), address));
  });

  test('40 pipelined requests with a valid token on one connection, after the address is locked out, are all served', async () => {
    const address = '198.51.100.3';
    await lockOut(address);
    const statuses = await pipelined(`${admin}/accounts`, 40, { authorization: bearer(token), ...from(address) });
    assert.equal(statuses.length, 40, `only ${statuses.length} of 40 pipelined requests were answered`);
    assert.deepEqual(tally(statuses), { 200: 40 }, `a valid token was refused: ${JSON.stringify(tally(statuses))}`);
  });

  test('40 concurrent requests with a valid token, after the address is locked out, are all served', async () => {
    const address = '198.51.100.4';
    await lockOut(address);
    const answers = await Promise.all(Array.from({ length: 40 }, () => get(bearer(token), address)));
    assert.deepEqual(tally(answers.map((answer) => answer.status)), { 200: 40 }, answers.find((answer) => answer.status !== 200)?.text);
  });

  test('40 pipelined requests with a valid token spend nothing of a fresh address\'s budget', async () => {
    const address = '198.51.100.5';
    const statuses = await pipelined(`${admin}/accounts`, 40, { authorization: bearer(token), ...from(address) });
    assert.deepEqual(tally(statuses), { 200: 40 });
    // The whole budget is still there: 20 wrong tokens are each told 401, the 21st is the first 429.
    await lockOut(address);
  });

  test('guesses pipelined past the budget are still told 401 only 20 times', async () => {
    const address = '198.51.100.6';
    const statuses = await pipelined(`${admin}/accounts`, 60, { authorization: bearer(issueAdminToken().token), ...from(address) });
    assert.equal(statuses.length, 60, `only ${statuses.length} of 60 pipelined requests were answered`);
    assert.deepEqual(tally(statuses), { 401: AUTH_FAILURES, 429: 60 - AUTH_FAILURES });
  });

  test('past the budget, a revoked token is told it is revoked, and is not served', async () => {
    const address = '198.51.100.7';
    const revoked = await makeAdminToken(workspace, 'leaver');
    expectData(await get(bearer(revoked), address));
    await cliOk(workspace, ['admin-tokens', 'revoke', revoked.slice('aapi_admin_'.length, 'aapi_admin_'.length + 12)]);
    await lockOut(address);
    expectFailure(await get(bearer(revoked), address), 401, 'admin_token_revoked');
    expectData(await get(bearer(token), address));
  });

  test('with no proxy in between, tools on the host share 127.0.0.1: guesses from one do not lock the others out', async () => {
    // No X-Forwarded-For: the connection's own loopback address, as every local tool has.
    const plain = (auth: string) => call('GET', `${admin}/accounts`, { auth });
    for (let i = 0; i < AUTH_FAILURES; i++) expectFailure(await plain(bearer(issueAdminToken().token)), 401, 'invalid_admin_token');
    expectFailure(await plain(bearer(issueAdminToken().token)), 429, 'too_many_failed_attempts');
    expectData(await plain(bearer(token)));
  });
});
