// Usernames a URL cannot carry: `.`, `..` and `-` alone are refused when made; an account that already has such a name
// (made before the rule) stays reachable by the CLI, by a raw or percent-encoded path, and by its own Basic credentials.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { loadConfig } from '../../../src/config.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { basic, call } from '../../support/http.ts';
import { cliOk, runCli, describeRun } from '../../support/server-process.ts';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

const ODD = ['.', '..', '-'];

/** GET with the path sent exactly as written (node:http does not remove dot segments, as fetch and browsers do). */
function rawGet(url: string, path: string, token: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const req = request({ host: hostname, port, path, method: 'GET', headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', fail);
    req.end();
  });
}

onEveryEngine('usernames of punctuation alone', ({ suite: { test, before }, admin }) => {
  before(async () => {
    // Made behind the operations' back, as an older version allowed: the store itself does not judge names.
    const store = openStore(loadConfig({ ...admin().workspace.env, LOG_LEVEL: 'silent' }));
    try {
      for (const username of ODD) await store.createAccount({ username, name: `odd ${username}`, timezone: 'UTC', premium: true });
    } finally {
      await store.close();
    }
  });

  test('are refused by the admin API and the CLI with invalid_username, and nothing is made', async () => {
    for (const username of ['...', '_', '-.-', '--']) {
      expectFailure(await admin().call('POST', '/accounts', { form: { username } }), 400, 'invalid_username');
      // On a command line a word that starts with '-' is a flag: the CLI is asked with the others.
      if (username.startsWith('-')) continue;
      const result = await runCli(admin().workspace, ['users', 'create', username, '--json']);
      assert.notEqual(result.code, 0, describeRun(['users', 'create', username], result));
      assert.match(result.stderr, /invalid_username/, describeRun(['users', 'create', username], result));
    }
    const listed = expectData(await admin().call('GET', '/accounts?limit=100'));
    const names = (listed as { username: string }[]).map((account) => account.username);
    for (const username of ['...', '_', '-.-', '--']) assert.ok(!names.includes(username), `${username} was made: ${names.join(', ')}`);
  });

  test('an existing one is reached by the CLI, by its path sent as-is or percent-encoded, and by its own key', async () => {
    for (const username of ODD) {
      const shown = await cliOk(admin().workspace, ['users', 'show', username, '--json']);
      assert.equal(JSON.parse(shown).username, username, shown);
      const encoded = [...username].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
      for (const path of [`/admin/v0/accounts/${username}`, `/admin/v0/accounts/${encoded}`]) {
        const answer = await rawGet(admin().admin, path, admin().token);
        assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.data.username, username, `${path} named another account: ${JSON.stringify(answer.body)}`);
      }
      const key = (await cliOk(admin().workspace, ['keys', 'create', username])).trim();
      const user = await call('GET', `${admin().server.api}/user`, { auth: basic(username, key) });
      assert.equal(user.status, 200, user.text);
      assert.equal(user.body.data.username, username);
    }
  });
});
