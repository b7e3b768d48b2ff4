// What the OpenAPI documents say about where they are and whose they are. The servers follow the configuration: the sandbox is
// listed only when SANDBOX_URL names it. The project is open source under the Apache License 2.0, and says so wherever a reader or
// a tool looks: LICENSE, NOTICE, both package.json files, and info.license (with info.contact) in the public and admin documents.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call } from '../support/http.ts';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { adminUrlOf } from './admin/admin-support.ts';

// x-internal: whether a server is for the operators alone; the description names its environment (OWASP API9, .spectral.yaml).
type Server = { url: string; description?: string; 'x-internal'?: boolean };
type Info = { license?: { name?: string; identifier?: string; url?: string }; contact?: { name?: string } };

// 127.0.0.1, not a made-up name: the document only names it, but nothing here should ever point elsewhere.
const SANDBOX_URL = 'http://127.0.0.1:9999';

let workspace: Workspace;
let server: ServerProcess;
let withSandboxUrl: ServerProcess;
let sandbox: ServerProcess;
let documents: { name: string; info: Info; servers: Server[] }[] = [];

function documentOf(name: string): { info: Info; servers: Server[] } {
  const found = documents.find((document) => document.name === name);
  assert.ok(found, `no ${name} document was fetched`);
  return found;
}

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn', ADMIN_PORT: '0' });
  [server, withSandboxUrl, sandbox] = await Promise.all([
    startServer(workspace),
    startServer(workspace, [], { SANDBOX_URL }),
    startServer(workspace, ['--sandbox'], { SANDBOX_URL }),
  ]);
  documents = await Promise.all(
    [
      ['live', `${server.api}/openapi.json`],
      ['live with SANDBOX_URL', `${withSandboxUrl.api}/openapi.json`],
      ['sandbox', `${sandbox.api}/openapi.json`],
      ['admin', `${adminUrlOf(server)}/openapi.json`],
    ].map(async ([name, url]) => {
      const response = await call('GET', url!);
      assert.equal(response.status, 200, `GET ${url} answered ${response.status}`);
      const { info, servers } = response.body as { info: Info; servers: Server[] };
      return { name: name!, info, servers };
    }),
  );
});

after(async () => {
  await Promise.all([server?.stop(), withSandboxUrl?.stop(), sandbox?.stop()]);
  workspace?.cleanup();
});

test('without SANDBOX_URL the live document names only itself: no guessed sandbox', () => {
  assert.deepEqual(documentOf('live').servers, [{ url: '/', description: 'This server: production, keys aapi_live_...', 'x-internal': false }]);
});

test('with SANDBOX_URL the live document names the sandbox second, at that URL', () => {
  const [first, second, ...rest] = documentOf('live with SANDBOX_URL').servers;
  assert.deepEqual(first, { url: '/', description: 'This server: production, keys aapi_live_...', 'x-internal': false });
  assert.equal(second?.['x-internal'], false);
  assert.equal(second?.url, SANDBOX_URL, 'the second server should be SANDBOX_URL');
  assert.match(second?.description ?? '', /^Sandbox\b/, 'the second server should be described as the sandbox');
  assert.deepEqual(rest, []);
});

test("the sandbox's document names only the sandbox, whatever SANDBOX_URL says", () => {
  assert.deepEqual(documentOf('sandbox').servers, [{ url: '/', description: 'This sandbox', 'x-internal': false }]);
});

test('the admin document names only its own listener', () => {
  assert.deepEqual(documentOf('admin').servers, [{ url: '/', description: 'This admin listener, of the production (live) server', 'x-internal': true }]);
});

test('LICENSE is the Apache License 2.0, whole, and NOTICE names the copyright holder', () => {
  const licence = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
  assert.match(licence, /^\s*Apache License\n\s*Version 2\.0, January 2004\n\s*http:\/\/www\.apache\.org\/licenses\/\n/, 'LICENSE should open with the Apache 2.0 header');
  assert.match(licence, /TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION/);
  assert.match(licence, /END OF TERMS AND CONDITIONS/, 'LICENSE should hold the terms to their end');
  assert.match(readFileSync(join(REPO_ROOT, 'NOTICE'), 'utf8'), /^Copyright 2026 The account-api authors$/m);
});

test('both package.json files declare Apache-2.0, and the package ships LICENSE and NOTICE', () => {
  const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { license?: string; files: string[] };
  const client = JSON.parse(readFileSync(join(REPO_ROOT, 'client/package.json'), 'utf8')) as { license?: string };
  assert.equal(root.license, 'Apache-2.0', 'package.json');
  assert.equal(client.license, 'Apache-2.0', 'client/package.json');
  // npm packs LICENSE by itself, but not NOTICE, which the licence (section 4d) says must travel with the work.
  for (const file of ['LICENSE', 'NOTICE']) assert.ok(root.files.includes(file), `package.json "files" should list ${file}`);
});

test('the public and the admin OpenAPI documents name the licence by its SPDX identifier, and whom to ask', () => {
  for (const { name, info } of documents) {
    assert.deepEqual(info.license, { name: 'Apache License 2.0', identifier: 'Apache-2.0' }, `${name} document: info.license`);
    assert.ok(info.contact?.name, `${name} document: info.contact should name whom to ask`);
  }
});
