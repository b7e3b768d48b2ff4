// The admin listener itself: off unless ADMIN_PORT, loopback by default, never the public port; its document, limits and metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { call } from '../../support/http.ts';
import { sample } from '../../support/signals.ts';
import { createWorkspace, expectStartFailure, startServer } from '../../support/server-process.ts';
import { adminUrlOf, bearer, expectData, expectFailure, makeAdminToken, startAdminServer, type AdminServer } from './admin-support.ts';

describe('the admin listener', () => {
  test('is off unless ADMIN_PORT is set: serve says nothing of it, and the public port does not answer its paths', async () => {
    const workspace = createWorkspace();
    const server = await startServer(workspace);
    try {
      assert.ok(!server.output.some((line) => line.startsWith('admin API at')), 'an admin API was announced without ADMIN_PORT');
      assert.equal((await call('GET', `${server.url}/admin/v0/openapi.json`)).status, 404);
    } finally {
      await server.stop();
      workspace.cleanup();
    }
  });

  test('binds to 127.0.0.1 unless ADMIN_HOST says otherwise', async () => {
    const workspace = createWorkspace({ ADMIN_PORT: '0' });
    const server = await startServer(workspace, ['--host', '0.0.0.0']);
    try {
      assert.match(adminUrlOf(server), /^http:\/\/127\.0\.0\.1:\d+\/admin\/v0$/);
    } finally {
      await server.stop();
      workspace.cleanup();
    }
    const elsewhere = createWorkspace({ ADMIN_PORT: '0', ADMIN_HOST: '::1' });
    const other = await startServer(elsewhere);
    try {
      assert.match(adminUrlOf(other), /^http:\/\/\[::1\]:\d+\/admin\/v0$/);
    } finally {
      await other.stop();
      elsewhere.cleanup();
    }
  });

  test('with --workers 2, one worker serves the admin API and the primary says where', async () => {
    const workspace = createWorkspace({ ADMIN_PORT: '0' });
    const token = await makeAdminToken(workspace);
    const server = await startServer(workspace, ['--workers', '2']);
    try {
      const admin = adminUrlOf(server);
      expectData(await call('POST', `${admin}/accounts`, { auth: bearer(token), form: { username: 'alice' } }), 201);
      for (let i = 0; i < 4; i++) assert.equal(expectData(await call('GET', `${admin}/accounts`, { auth: bearer(token) })).length, 1);
      assert.equal((await call('GET', `${server.api}/hello`)).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
      workspace.cleanup();
    }
  });

  test('refuses to start on the public port', async () => {
    const workspace = createWorkspace({ ADMIN_PORT: '18089' });
    const message = await expectStartFailure(workspace, ['--port', '18089']);
    assert.match(message, /ADMIN_PORT must differ from the public port/);
    workspace.cleanup();
  });
});

describe('the admin API document, limits and metrics', () => {
  let subject: AdminServer;
  before(async () => {
    subject = await startAdminServer(null, { ADMIN_RATE_LIMIT_PER_TOKEN: '5', RATE_LIMIT_WINDOW_MS: '60000', METRICS_PORT: '0' });
  });
  after(async () => subject?.stop());

  test('GET /admin/v0/openapi.json is a valid OpenAPI 3.1 document of every admin operation, generated from the routes', async () => {
    const document = (await call('GET', `${subject.admin}/openapi.json`)).body;
    assert.equal(document.openapi, '3.1.0');
    const result = await new Validator().validate(structuredClone(document) as never);
    assert.equal(result.valid, true, `not a valid OpenAPI document: ${String(JSON.stringify(result.errors)).slice(0, 2000)}`);
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string; security: unknown }>>).flatMap((methods) =>
      Object.values(methods),
    );
    assert.deepEqual(operations.map((operation) => operation.operationId).sort(), [
      'addWebhookEndpoint',
      'createAccount',
      'createKey',
      'deleteAccount',
      'disableWebhookEndpoint',
      'enableWebhookEndpoint',
      'getAccount',
      'getWebhookEndpoint',
      'listAccounts',
      'listKeys',
      'listWebhookDeliveries',
      'listWebhookEndpoints',
      'readAudit',
      'readKeyUsage',
      'redeliverWebhookEvent',
      'removeWebhookEndpoint',
      'revokeKey',
      'rollKey',
      'testWebhookEndpoint',
      'updateAccount',
    ]);
    for (const operation of operations) assert.deepEqual(operation.security, [{ adminToken: [] }]);
    assert.equal(document.components.securitySchemes.adminToken.scheme, 'bearer');
  });

  test('rate limits count per admin token: a spent token gets 429, another token is unaffected', async () => {
    const spender = await makeAdminToken(subject.workspace, 'spender');
    let last = await call('GET', `${subject.admin}/accounts`, { auth: bearer(spender) });
    assert.equal(last.headers.get('ratelimit-limit'), '5');
    for (let i = 0; i < 5; i++) last = await call('GET', `${subject.admin}/accounts`, { auth: bearer(spender) });
    expectFailure(last, 429, 'rate_limited');
    assert.ok(Number(last.headers.get('retry-after')) >= 1);
    expectData(await subject.call('GET', '/accounts'));
  });

  test('an admin token never reaches the logs, wherever a caller puts it', async () => {
    const token = await makeAdminToken(subject.workspace, 'logged');
    await call('GET', `${subject.admin}/accounts?cursor=${token}`, { auth: bearer(token), headers: { 'x-request-id': token } });
    await call('GET', `${subject.admin}/accounts`, { auth: bearer(`${token}x`) });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const leaked = subject.server.output.filter((line) => line.includes(token.slice(23)));
    assert.deepEqual(leaked, [], 'the token was logged');
  });

  test('headers too large are 431, as on the public port', async () => {
    const result = await call('GET', `${subject.admin}/accounts`, { auth: bearer(subject.token), headers: { 'x-padding': 'x'.repeat(20_000) } });
    assert.equal(result.status, 431);
  });

  test('its requests are counted in the same metrics, labelled port="admin"', async () => {
    expectData(await subject.call('GET', '/accounts'));
    expectFailure(await call('GET', `${subject.admin}/accounts`), 401, 'admin_token_required');
    const metricsUrl = subject.server.output.find((line) => line.startsWith('metrics at '))!.split(' ')[2]!;
    const text = await (await fetch(metricsUrl)).text();
    assert.ok(sample(text, 'http_requests_total', { route: '/admin/v0/accounts', method: 'GET', status: '200', port: 'admin' }) >= 1, text.slice(0, 2000));
    assert.ok(sample(text, 'auth_failures_total', { reason: 'admin_token_required', port: 'admin' }) >= 1);
    assert.ok(sample(text, 'rate_limit_rejections_total', { budget: 'per_key', port: 'admin' }) >= 1);
  });
});
