// The project is open source under the Apache License 2.0, and says so wherever a reader or a tool looks: LICENSE, NOTICE, both
// package.json files, and info.license (with info.contact) in the public and the admin OpenAPI documents.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call } from '../support/http.ts';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { adminUrlOf } from './admin/admin-support.ts';

type Info = { license?: { name?: string; identifier?: string; url?: string }; contact?: { name?: string } };

let workspace: Workspace;
let server: ServerProcess;
let documents: { name: string; info: Info }[] = [];

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn', ADMIN_PORT: '0' });
  server = await startServer(workspace);
  documents = await Promise.all(
    [
      ['public', `${server.api}/openapi.json`],
      ['admin', `${adminUrlOf(server)}/openapi.json`],
    ].map(async ([name, url]) => {
      const response = await call('GET', url!);
      assert.equal(response.status, 200, `GET ${url} answered ${response.status}`);
      return { name: name!, info: (response.body as { info: Info }).info };
    }),
  );
});

after(async () => {
  await server?.stop();
  workspace?.cleanup();
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
