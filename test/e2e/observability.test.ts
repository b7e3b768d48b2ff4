// Protects what operators see: X-Request-Id on every answer, one JSON log line per request, and Prometheus metrics.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { issueKey } from '../../src/domain/api-keys.ts';
import { eventually } from '../support/eventually.ts';
import { call, failureMessage, type CallOptions } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { linesOfRequest, logLines, sample } from '../support/signals.ts';

/** `promtool check metrics` on `text`: its status and what it said; undefined when promtool is not installed. */
function lintWithPromtool(text: string): Promise<{ code: number | null; output: string } | undefined> {
  return new Promise((resolve) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(text);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const METRICS_TOKEN = 'observability-test-token-0123456789';

/** The URL of the separate metrics listener, which the server prints before it says it is listening. */
function metricsUrlOf(server: ServerProcess): string {
  const url = server.output.map((line) => /^metrics at (\S+)/.exec(line)?.[1]).find((found) => found !== undefined);
  assert.ok(url !== undefined, `the server did not say where its metrics listener is:\n${server.output.join('\n')}`);
  return url;
}

async function scrape(url: string, token?: string): Promise<string> {
  const result = await call('GET', url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  assert.equal(result.status, 200, `scraping ${url} answered ${result.status}: ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^text\/plain/, 'metrics are not Prometheus text');
  return result.text;
}

// One server with a metrics listener (METRICS_PORT) and no token, one with a token and tiny budgets.
let open: { workspace: Workspace; server: ServerProcess; metricsUrl: string; alice: Account };
let guarded: { workspace: Workspace; server: ServerProcess };

before(async () => {
  const workspace = createWorkspace({ METRICS_PORT: '0' });
  const alice = await createAccount(workspace, 'alice');
  const server = await startServer(workspace);
  open = { workspace, server, metricsUrl: metricsUrlOf(server), alice };
  const guardedWorkspace = createWorkspace({ METRICS_TOKEN, RATE_LIMIT_PER_ADDRESS: '2', RATE_LIMIT_AUTH_FAILURES: '2' });
  guarded = { workspace: guardedWorkspace, server: await startServer(guardedWorkspace) };
});

after(async () => {
  await Promise.all([open.server.stop(), guarded.server.stop()]);
  open.workspace.cleanup();
  guarded.workspace.cleanup();
});

/** One request of each kind of answer, as [what, status, method, path, options]. */
function answerKinds(): [string, number, string, string, CallOptions][] {
  return [
    ['a success', 200, 'GET', '/api/v0/user', { auth: open.alice }],
    ['a public success', 200, 'GET', '/api/v0/hello', {}],
    ['a 401', 401, 'GET', '/api/v0/user', {}],
    ['a 404', 404, 'GET', '/api/v0/nowhere', {}],
    ['a 405', 405, 'DELETE', '/api/v0/user', {}],
    ['a 413', 413, 'POST', '/api/v0/hello', { form: { name: 'x'.repeat(20_000) } }],
    ['a 400 for a URL the router cannot decode', 400, 'GET', '/api/v0/%zz', {}],
    ['a 304', 304, 'GET', '/api/v0/settings/timezones', { auth: open.alice, headers: { 'if-none-match': '*' } }],
  ];
}

describe('X-Request-Id', () => {
  test('a well-formed X-Request-Id from the client is echoed on every kind of answer', async () => {
    for (const [what, status, method, path, options] of answerKinds()) {
      const id = `client-id.${status}:${method}`;
      const result = await call(method, `${open.server.url}${path}`, { ...options, headers: { ...options.headers, 'x-request-id': id } });
      assert.equal(result.status, status, `${what}: expected ${status}, got ${result.status}: ${result.text}`);
      assert.equal(result.headers.get('x-request-id'), id, `${what}: the client's X-Request-Id was not echoed`);
    }
  });

  test('without one, every answer carries a fresh random UUID', async () => {
    const seen = new Set<string>();
    for (const [what, status, method, path, options] of answerKinds()) {
      const result = await call(method, `${open.server.url}${path}`, options);
      assert.equal(result.status, status, `${what}: ${result.text}`);
      const id = result.headers.get('x-request-id') ?? '';
      assert.match(id, UUID, `${what}: X-Request-Id '${id}' is not a UUID`);
      assert.ok(!seen.has(id), `${what}: the id ${id} was used twice`);
      seen.add(id);
    }
  });

  test('an ill-formed, too long or key-like X-Request-Id is replaced by a fresh UUID', async () => {
    for (const id of ['has spaces', 'x'.repeat(129), 'semi;colon', issueKey('live').token]) {
      const result = await call('GET', `${open.server.api}/hello`, { headers: { 'x-request-id': id } });
      assert.match(result.headers.get('x-request-id') ?? '', UUID, `'${id.slice(0, 40)}' was not replaced`);
    }
  });

  test('a 429 carries the request id too', async () => {
    const id = 'rate-limited-request';
    let last = await call('GET', `${guarded.server.api}/hello`);
    for (let i = 0; i < 3 && last.status !== 429; i++) last = await call('GET', `${guarded.server.api}/hello`, { headers: { 'x-request-id': id } });
    assert.equal(last.status, 429, `the per-address budget of 2 never ran out: ${last.text}`);
    assert.equal(last.headers.get('x-request-id'), id);
  });
});

describe('log lines', () => {
  test('every request writes exactly one JSON line, with its reqId, route, path without query, status and time', async () => {
    const cases: [string, string, CallOptions, Record<string, unknown>][] = [
      ['GET', '/api/v0/user?secret=1', { auth: open.alice }, { route: '/api/v0/user', path: '/api/v0/user', statusCode: 200 }],
      ['GET', '/api/v0/nowhere?x=y', {}, { route: 'unmatched', path: '/api/v0/nowhere', statusCode: 404, code: 'not_found' }],
      ['PUT', '/api/v0/settings', {}, { route: 'unmatched', path: '/api/v0/settings', statusCode: 405, code: 'method_not_allowed' }],
      ['GET', '/api/v0/settings', {}, { route: '/api/v0/settings', statusCode: 401, code: 'credentials_required' }],
      ['GET', '/api/v0/%zz?q=1', {}, { route: 'unmatched', path: '/api/v0/%zz', statusCode: 400, code: 'malformed_url' }],
    ];
    for (const [index, [method, path, options, expected]] of cases.entries()) {
      const reqId = `log-line-${index}`;
      await call(method, `${open.server.url}${path}`, { ...options, headers: { 'x-request-id': reqId } });
      const completed = (await linesOfRequest(open.server, reqId)).filter((line) => line.msg === 'request completed');
      assert.equal(completed.length, 1, `${method} ${path}: expected one 'request completed' line, got ${completed.length}`);
      const line = completed[0]!;
      assert.equal(line.level, 30, `${method} ${path}: not logged at info`);
      assert.equal(line.method, method);
      for (const [field, value] of Object.entries(expected)) {
        assert.equal(line[field], value, `${method} ${path}: ${field} is ${JSON.stringify(line[field])}, expected ${JSON.stringify(value)}`);
      }
      assert.equal(typeof line.responseTime, 'number', `${method} ${path}: no responseTime`);
      if (line.statusCode === 200) assert.equal(line.code, undefined, 'a success carries no failure code');
    }
  });

  test("Fastify's own 'incoming request' lines are not written", () => {
    const incoming = logLines(open.server).filter((line) => line.msg === 'incoming request');
    assert.equal(incoming.length, 0, `found ${incoming.length} 'incoming request' lines`);
  });

  test('an auth failure is logged at info with its reason and username, not the key', async () => {
    const wrongKey = issueKey('live').token;
    await call('GET', `${open.server.api}/user`, { auth: { username: 'alice', key: wrongKey }, headers: { 'x-request-id': 'wrong-key' } });
    const lines = await linesOfRequest(open.server, 'wrong-key');
    const failure = lines.find((line) => line.msg === 'auth failure');
    assert.ok(failure !== undefined, `no 'auth failure' line: ${JSON.stringify(lines)}`);
    assert.equal(failure.level, 30);
    assert.equal(failure.reason, 'invalid_credentials');
    assert.equal(failure.username, 'alice');
    assert.ok(!JSON.stringify(lines).includes(wrongKey), 'the key was logged');
  });

  test('every line is JSON with a level and a time', () => {
    const jsonish = open.server.output.filter((line) => line.startsWith('{'));
    assert.ok(jsonish.length > 10, `only ${jsonish.length} log lines`);
    for (const line of jsonish) {
      const parsed = JSON.parse(line) as { level?: unknown; time?: unknown };
      assert.equal(typeof parsed.level, 'number', `no level: ${line}`);
      assert.equal(typeof parsed.time, 'number', `no time: ${line}`);
    }
  });
});

describe('metrics', () => {
  test("pass Prometheus's own lint: no gauge (or other non-counter) named *_total; promtool check metrics finds nothing", async () => {
    await call('GET', `${open.server.api}/user`, { auth: open.alice });
    const text = await scrape(open.metricsUrl);
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
    assert.ok(types.length > 10, `the scrape should declare its metrics' types:\n${text.slice(0, 500)}`);
    const misnamed = types.filter(({ name, type }) => type !== 'counter' && name.endsWith('_total'));
    assert.deepEqual(misnamed, [], 'promtool: non-counter metrics should not have "_total" suffix');
    const promtool = await lintWithPromtool(text);
    if (promtool === undefined) {
      // A CI machine installs it (.ci/run): there a missing promtool is a failure, not a reason to skip.
      assert.notEqual(process.env.CI, 'true', 'CI must provide promtool (Debian package prometheus)');
      return;
    }
    assert.deepEqual(promtool, { code: 0, output: '' }, 'promtool check metrics should report no problem');
  });

  test('count requests by route pattern, method and status; unknown paths as route="unmatched", never the raw path', async () => {
    const before = await scrape(open.metricsUrl);
    await call('GET', `${open.server.api}/user`, { auth: open.alice });
    await call('GET', `${open.server.api}/user`, { auth: open.alice });
    await call('GET', `${open.server.api}/no-such-thing-${Date.now()}`);
    const afterwards = await scrape(open.metricsUrl);
    const user = { route: '/api/v0/user', method: 'GET', status: '200' };
    assert.equal(sample(afterwards, 'http_requests_total', user) - sample(before, 'http_requests_total', user), 2);
    const unmatched = { route: 'unmatched', method: 'GET', status: '404' };
    assert.equal(sample(afterwards, 'http_requests_total', unmatched) - sample(before, 'http_requests_total', unmatched), 1);
    assert.ok(!afterwards.includes('no-such-thing'), 'a raw path became a label');
    const latency = { route: '/api/v0/user', method: 'GET' };
    assert.equal(
      sample(afterwards, 'http_request_duration_seconds_count', latency) - sample(before, 'http_request_duration_seconds_count', latency),
      2,
      'the latency histogram did not observe both requests',
    );
  });

  test('auth_failures_total counts each failed authentication by its 401 code', async () => {
    const before = await scrape(open.metricsUrl);
    await call('GET', `${open.server.api}/user`, { auth: { username: 'alice', key: issueKey('live').token } });
    await call('GET', `${open.server.api}/user`, { auth: { username: 'alice', key: 'aapi_live_short' } });
    await call('GET', `${open.server.api}/user`, { auth: { username: 'alice', key: 'aapi_live_short' } });
    await call('GET', `${open.server.api}/user`);
    const afterwards = await scrape(open.metricsUrl);
    const delta = (reason: string) => sample(afterwards, 'auth_failures_total', { reason }) - sample(before, 'auth_failures_total', { reason });
    assert.equal(delta('invalid_credentials'), 1);
    assert.equal(delta('malformed_key'), 2);
    assert.equal(delta('credentials_required'), 1);
  });

  test('the process metrics are there', async () => {
    const text = await scrape(open.metricsUrl);
    assert.ok(sample(text, 'process_resident_memory_bytes') > 0, 'no process_resident_memory_bytes');
  });

  test('rate_limit_rejections_total counts 429s by budget', async () => {
    let status = 0;
    for (let i = 0; i < 3 && status !== 429; i++) status = (await call('GET', `${guarded.server.api}/hello`)).status;
    assert.equal(status, 429, 'the per-address budget of 2 never ran out');
    const text = await scrape(`${guarded.server.url}/metrics`, METRICS_TOKEN);
    assert.ok(sample(text, 'rate_limit_rejections_total', { budget: 'per_address' }) >= 1, `no per_address rejection counted:\n${text}`);
    // Spend the failed-authentication budget (2) from this address, then one more is refused before any check.
    for (let i = 0; i < 3; i++) await call('GET', `${guarded.server.api}/user`, { auth: { username: 'nobody', key: issueKey('live').token } });
    const afterwards = await scrape(`${guarded.server.url}/metrics`, METRICS_TOKEN);
    assert.ok(sample(afterwards, 'rate_limit_rejections_total', { budget: 'failed_auth' }) >= 1, 'no failed_auth rejection counted');
  });

  test('store_errors_total counts a request that failed on the store', async (t) => {
    // Destructive: a workspace and server of their own.
    const broken = createWorkspace({ METRICS_PORT: '0' });
    const victim = await createAccount(broken, 'victim');
    const server = await startServer(broken);
    t.after(async () => {
      await server.stop();
      broken.cleanup();
    });
    const db = new DatabaseSync(join(broken.dir, 'live.db'), { timeout: 5000 });
    try {
      db.exec('DROP TABLE api_keys');
    } finally {
      db.close();
    }
    const result = await call('GET', `${server.api}/user`, { auth: victim, headers: { 'x-request-id': 'store-failure' } });
    assert.equal(result.status, 500, result.text);
    assert.equal(result.headers.get('x-request-id'), 'store-failure', 'a 500 did not carry the request id');
    const text = await scrape(metricsUrlOf(server));
    assert.equal(sample(text, 'store_errors_total', { code: 'internal_error' }), 1);
    const lines = await linesOfRequest(server, 'store-failure');
    const error = lines.find((line) => line.msg === 'request failed');
    assert.ok(error !== undefined, `the failure was not logged with the request's id: ${JSON.stringify(lines)}`);
    assert.equal(error.level, 50);
    assert.match(JSON.stringify(error.err), /api_keys/, 'the error log line does not say what failed');
  });
});

describe('where /metrics is served', () => {
  test('without METRICS_TOKEN, /metrics on the public port answers 404 not_found', async () => {
    const result = await call('GET', `${open.server.url}/metrics`);
    assert.equal(result.status, 404);
    assert.equal(failureMessage(result).code, 'not_found');
  });

  test('the METRICS_PORT listener serves only GET /metrics, without credentials', async () => {
    const text = await scrape(open.metricsUrl);
    assert.match(text, /^# HELP http_requests_total /m);
    const elsewhere = await call('GET', open.metricsUrl.replace(/\/metrics$/, '/api/v0/user'));
    assert.equal(elsewhere.status, 404);
    assert.equal(failureMessage(elsewhere).code, 'not_found');
    const post = await call('POST', open.metricsUrl);
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  test('with METRICS_TOKEN, /metrics on the public port needs Authorization: Bearer TOKEN, else 401 metrics_token_required', async () => {
    const url = `${guarded.server.url}/metrics`;
    for (const authorization of [undefined, 'Bearer wrong-token-of-some-length', `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`, `Bearer ${METRICS_TOKEN}x`]) {
      const result = await call('GET', url, authorization === undefined ? {} : { headers: { authorization } });
      assert.equal(result.status, 401, `${authorization}: expected 401, got ${result.status}`);
      assert.equal(failureMessage(result).code, 'metrics_token_required');
      assert.match(result.headers.get('www-authenticate') ?? '', /^Bearer/, 'no Bearer challenge');
    }
    assert.match(await scrape(url, METRICS_TOKEN), /^# TYPE http_requests_total counter/m);
  });

  test('/metrics is neither rate-limited nor counted as an API route', async () => {
    // The guarded server allows 2 public requests per address a minute; scraping is not one of them.
    for (let i = 0; i < 5; i++) await scrape(`${guarded.server.url}/metrics`, METRICS_TOKEN);
    const text = await scrape(`${guarded.server.url}/metrics`, METRICS_TOKEN);
    assert.doesNotMatch(text, /route="\/metrics"/, '/metrics counted itself');
  });

  test('scraping during requests does not lose counts', async () => {
    const before = sample(await scrape(open.metricsUrl), 'http_requests_total', { route: '/api/v0/hello', method: 'GET', status: '200' });
    await Promise.all(Array.from({ length: 20 }, () => call('GET', `${open.server.api}/hello`)));
    // A request is counted as its answer finishes, which a loaded machine can put a while after the client has it: waited
    // for (a count that lost some never gets there, and fails as a hang), then checked to be exactly 20.
    const counted = await eventually(
      'the 20 requests counted',
      async () => sample(await scrape(open.metricsUrl), 'http_requests_total', { route: '/api/v0/hello', method: 'GET', status: '200' }) - before,
      (delta) => delta >= 20,
    );
    assert.equal(counted, 20);
  });
});
