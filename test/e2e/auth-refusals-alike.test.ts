// Unknown user and wrong key must be indistinguishable in what is answered: the same status, body and challenge. (That they
// cost the same work is counted in test/unit/http/auth/decoy-comparison.test.ts; `npm run test:timing` measures the time.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { composeKey, issueKey, parseKey, randomBase62 } from '../../src/domain/api-keys.ts';
import { basic } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  alice = await createAccount(workspace, 'alice');
  await createAccount(workspace, 'bob');
  server = await startServer(workspace);
});

after(async () => {
  await server?.stop();
  workspace?.cleanup();
});

test('unknown user and wrong key get identical answers: 401, the same body, the same challenge', async () => {
  const neverIssued = issueKey('live').token;
  // A key id that exists (key ids are not secret) with a wrong secret: the store finds a row, the hash does not match.
  const parsed = parseKey(alice.key);
  assert.ok(parsed.ok);
  const wrongSecret = composeKey('live', parsed.key.keyId, randomBase62(32)).token;
  const cases = {
    'unknown user': basic('nobody', neverIssued),
    'wrong key': basic(alice.username, neverIssued),
    'unknown user, existing key id': basic('nobody', wrongSecret),
    'wrong key, existing key id': basic(alice.username, wrongSecret),
    "another account's key": basic('bob', alice.key),
  };
  const answers = new Set<string>();
  for (const [name, authorization] of Object.entries(cases)) {
    for (let round = 0; round < 3; round++) {
      const response = await fetch(`${server.api}/user`, { headers: { authorization } });
      assert.equal(response.status, 401, `${name} answered ${response.status}`);
      answers.add(JSON.stringify({ challenge: response.headers.get('www-authenticate'), body: await response.text() }));
    }
  }
  assert.equal(answers.size, 1, `the answers differ: ${[...answers].join(' / ')}`);
});
