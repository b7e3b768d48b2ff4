// Protects the log and the echoed request id from keys in encoded forms: a Basic credential percent-encoded in the path
// (encodeURIComponent turns its '=' padding into %3D), or base64 after a prefix ('Basic%20', 'key=', 'trace.'), and an admin
// token's body without its prefix. The answer line is written without pino's redaction, so these checks are all that stand
// between a key and the log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueKey } from '../../src/domain/api-keys.ts';
import { ADMIN_TOKEN_PREFIXES, issueAdminToken } from '../../src/domain/admin-tokens.ts';
import { loggablePath } from '../../src/http/observability/key-redaction.ts';
import { requestIdFor } from '../../src/http/observability/request-id.ts';
import { call } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { linesOfRequest, logsSettled } from '../support/signals.ts';

const key = issueKey('live').token;
const basicOf = (username: string, token: string) => Buffer.from(`${username}:${token}`).toString('base64');

describe('key-redaction on base64 credentials that are not the whole text', () => {
  test('a percent-encoded Basic credential in the path (encodeURIComponent, "=" padding as %3D) is redacted', () => {
    const encoded = encodeURIComponent(basicOf('bob', key)); // "bob:" + 60 = 64 bytes: ends in "%3D%3D"
    assert.match(encoded, /%3D$/);
    const logged = loggablePath(`/api/v0/user/${encoded}`);
    assert.ok(!logged.includes(encoded), `logged verbatim: ${logged}`);
  });

  test('the Authorization value pasted in the path ("Basic%20<base64>") is redacted', () => {
    const logged = loggablePath(`/api/v0/Basic%20${basicOf('alice', key)}`);
    assert.ok(!logged.includes(basicOf('alice', key)), `logged verbatim: ${logged}`);
  });

  test('a base64 credential after "key=" in a path segment is redacted', () => {
    const logged = loggablePath(`/api/v0/key=${Buffer.from(`alice:${key}`).toString('base64url')}`);
    assert.ok(!logged.includes(Buffer.from(`alice:${key}`).toString('base64url')), `logged verbatim: ${logged}`);
  });

  test('an X-Request-Id that carries a base64url credential after a prefix is replaced, not echoed and logged', () => {
    const id = `trace.${Buffer.from(`alice:${key}`).toString('base64url')}`;
    assert.notEqual(requestIdFor(id), id, 'the key-bearing request id was kept');
  });
});

describe('admin tokens', () => {
  // holdsKeyBody tries only the live and sandbox prefixes, so an admin token's checksummed body (prefix cut off) is not seen.
  test('an admin token body without its prefix is redacted from a path and refused as a request id, as an API key body is', () => {
    const apiKeyBody = issueKey('live').token.slice('aapi_live_'.length);
    assert.ok(!loggablePath(`/admin/v0/accounts/${apiKeyBody}`).includes(apiKeyBody), 'sanity: an API key body is redacted');
    for (const environment of ['live', 'sandbox'] as const) {
      const body = issueAdminToken(environment).token.slice(ADMIN_TOKEN_PREFIXES[environment].length);
      assert.ok(!loggablePath(`/admin/v0/accounts/${body}`).includes(body), `a ${environment} admin token body was logged`);
      assert.notEqual(requestIdFor(body), body, `a ${environment} admin token body was kept as the request id`);
    }
  });
});

describe('the real server', () => {
  let workspace: Workspace;
  let server: ServerProcess;
  let bob: Account;

  before(async () => {
    workspace = createWorkspace();
    bob = await createAccount(workspace, 'bob');
    server = await startServer(workspace);
  });
  after(async () => {
    await server?.stop();
    workspace?.cleanup();
  });

  test("writes no form of bob's key on the 'request completed' line or anywhere else", async () => {
    const credential = basicOf(bob.username, bob.key);
    const inPath = encodeURIComponent(credential);
    const requestId = `trace.${Buffer.from(`${bob.username}:${bob.key}`).toString('base64url')}`;
    const answer = await call('GET', `${server.api}/user/${inPath}`, { headers: { 'x-request-id': requestId } });
    const reqId = answer.headers.get('x-request-id')!;
    await linesOfRequest(server, reqId);
    await logsSettled(server);
    const output = server.output.join('\n');
    const decodedForms = [credential, inPath, requestId, Buffer.from(`${bob.username}:${bob.key}`).toString('base64url')];
    const found = decodedForms.filter((form) => output.includes(form));
    assert.deepEqual(found, [], `the server wrote these encodings of a key:\n${server.output.filter((line) => found.some((f) => line.includes(f))).join('\n')}`);
    assert.notEqual(reqId, requestId, 'the key-bearing X-Request-Id was echoed to the client');
  });
});
