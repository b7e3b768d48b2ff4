// The admin API's accounts work end to end: create, page, read, change and delete, over a real serve, on each engine.
import assert from 'node:assert/strict';
import { cliOk } from '../../support/server-process.ts';
import { expectData, onEveryEngine } from './admin-support.ts';

onEveryEngine('admin accounts: happy paths', ({ suite: { test }, admin }) => {
  test('POST /accounts creates an account from a form and answers 201 with it', async () => {
    const data = expectData(await admin().call('POST', '/accounts', { form: { username: 'alice', name: 'Alice', timezone: 'Europe/Kyiv', premium: 'true' } }), 201);
    assert.deepEqual({ ...data, user_id: 0, created_at: '' }, { user_id: 0, username: 'alice', name: 'Alice', timezone: 'Europe/Kyiv', premium: true, created_at: '' });
    assert.equal(typeof data.user_id, 'number');
  });

  test('POST /accounts takes JSON too, and defaults name to the username, timezone to UTC, premium to false', async () => {
    const data = expectData(await admin().call('POST', '/accounts', { json: { username: 'bob' } }), 201);
    assert.deepEqual([data.name, data.timezone, data.premium], ['bob', 'UTC', false]);
  });

  test('GET /accounts/{username} reads it, ignoring case', async () => {
    const data = expectData(await admin().call('GET', '/accounts/ALICE'));
    assert.equal(data.username, 'alice');
    assert.equal(data.name, 'Alice');
  });

  test('GET /accounts pages with a cursor until meta.next_cursor is null', async () => {
    for (const username of ['carol', 'dave', 'erin']) expectData(await admin().call('POST', '/accounts', { form: { username } }), 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const result = await admin().call('GET', `/accounts?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      const data = expectData(result);
      assert.ok(data.length <= 2, `a page of limit 2 held ${data.length}`);
      seen.push(...data.map((account: { username: string }) => account.username));
      cursor = result.body.meta.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    assert.deepEqual(seen, ['alice', 'bob', 'carol', 'dave', 'erin']);
    assert.equal(pages, 3);
  });

  test('GET /accounts without a limit gives at most 50, and says there is no next page', async () => {
    const result = await admin().call('GET', '/accounts');
    assert.equal(expectData(result).length, 5);
    assert.deepEqual(result.body.meta, { next_cursor: null });
  });

  test('PATCH /accounts/{username} changes premium, name and timezone, from a form or JSON', async () => {
    let data = expectData(await admin().call('PATCH', '/accounts/bob', { form: { premium: 'true', name: 'Bob B' } }));
    assert.deepEqual([data.premium, data.name, data.timezone], [true, 'Bob B', 'UTC']);
    data = expectData(await admin().call('PATCH', '/accounts/bob', { json: { timezone: 'Asia/Tokyo', premium: false } }));
    assert.deepEqual([data.premium, data.name, data.timezone], [false, 'Bob B', 'Asia/Tokyo']);
    assert.equal(expectData(await admin().call('GET', '/accounts/bob')).timezone, 'Asia/Tokyo');
  });

  test('DELETE /accounts/{username} deletes it; reading it then is 404', async () => {
    assert.deepEqual(expectData(await admin().call('DELETE', '/accounts/erin')), { username: 'erin', deleted: true });
    assert.equal((await admin().call('GET', '/accounts/erin')).status, 404);
  });

  test('an account made on the admin port works on the public port with a key issued there', async () => {
    const key = expectData(await admin().call('POST', '/accounts/alice/keys', { form: { label: 'e2e' } }), 201).key;
    const publicUrl = admin().server.api;
    const response = await fetch(`${publicUrl}/user`, { headers: { authorization: `Basic ${Buffer.from(`alice:${key}`).toString('base64')}` } });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { data: { name: string } }).data.name, 'Alice');
  });

  test('GET /accounts?username_prefix= keeps the usernames starting with it, ignoring case, paged by the same cursor', async () => {
    for (const username of ['alina', 'ALIBI', 'abc', 'a_c', 'malik']) expectData(await admin().call('POST', '/accounts', { form: { username } }), 201);
    const names = (data: { username: string }[]) => data.map((account) => account.username);
    const everyone: string[] = names(expectData(await admin().call('GET', '/accounts?limit=100')));
    // Worked out here from the whole list, not taken from the filtered answer.
    const startingWithAli = everyone.filter((username) => username.toLowerCase().startsWith('ali'));
    assert.ok(startingWithAli.includes('alice') && startingWithAli.length === 3, String(startingWithAli));
    assert.deepEqual(names(expectData(await admin().call('GET', '/accounts?username_prefix=ALI'))), startingWithAli, 'ALI did not find alice');
    const first = await admin().call('GET', '/accounts?username_prefix=ali&limit=2');
    assert.deepEqual(names(expectData(first)), startingWithAli.slice(0, 2));
    const second = await admin().call('GET', `/accounts?username_prefix=ali&limit=2&cursor=${first.body.meta.next_cursor}`);
    assert.deepEqual(names(expectData(second)), startingWithAli.slice(2));
    assert.equal(second.body.meta.next_cursor, null);
    assert.deepEqual(names(expectData(await admin().call('GET', '/accounts?username_prefix=a_'))), ['a_c'], "'a_' matched abc: '_' was a wildcard");
    assert.deepEqual(expectData(await admin().call('GET', '/accounts?username_prefix=nobody')), []);
  });

  test('the CLI: users list --prefix lists the same matches', async () => {
    const listed = JSON.parse(await cliOk(admin().workspace, ['users', 'list', '--prefix', 'A_', '--json'])) as { username: string }[];
    assert.deepEqual(listed.map((account) => account.username), ['a_c']);
    const table = await cliOk(admin().workspace, ['users', 'list', '--prefix', 'ali']);
    assert.match(table, /^USER_ID +USERNAME/);
    assert.ok(table.includes('alina') && table.includes('ALIBI') && !table.includes('malik'), table);
  });
});
