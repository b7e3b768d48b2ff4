// GET /admin/v0/audit: every admin change with actor admin:<token id>, request id and address; filters and cursor pages.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { cliOk } from '../../support/server-process.ts';
import { call } from '../../support/http.ts';
import { bearer, expectData, makeAdminToken, onEveryEngine } from './admin-support.ts';

type Entry = { id: number; action: string; actor: string; username: string | null; request_id: string | null; address: string | null; changes: any; occurred_at: string };

onEveryEngine('admin audit: happy paths', ({ suite: { test }, admin }) => {
  const tokenId = () => admin().token.slice(11, 23);

  test('every admin change is recorded with actor admin:<token id>, its request id and the caller address', async () => {
    const headers = { 'x-request-id': 'audit-req-1' };
    expectData(await admin().call('POST', '/accounts', { form: { username: 'alice' }, headers }), 201);
    expectData(await admin().call('PATCH', '/accounts/alice', { form: { premium: 'true', name: 'Alice' }, headers: { 'x-request-id': 'audit-req-2' } }));
    const key = expectData(await admin().call('POST', '/accounts/alice/keys', { headers: { 'x-request-id': 'audit-req-3' } }), 201);
    expectData(await admin().call('POST', `/keys/${key.key_id}/roll`, { headers: { 'x-request-id': 'audit-req-4' } }));
    expectData(await admin().call('DELETE', `/keys/${key.key_id}`, { headers: { 'x-request-id': 'audit-req-5' } }));
    const entries: Entry[] = expectData(await admin().call('GET', '/audit?username=alice'));
    const mine = entries.filter((entry) => entry.actor === `admin:${tokenId()}`);
    assert.deepEqual(
      mine.map((entry) => [entry.action, entry.request_id]).reverse(),
      [
        ['account.created', 'audit-req-1'],
        ['account.updated', 'audit-req-2'],
        ['account.premium_changed', 'audit-req-2'],
        ['key.created', 'audit-req-3'],
        ['key.rolled', 'audit-req-4'],
        ['key.revoked', 'audit-req-5'],
      ],
    );
    for (const entry of mine) assert.equal(entry.address, '127.0.0.1');
    assert.ok(!JSON.stringify(entries).includes(key.key), 'an entry holds a key');
  });

  test('deleting an account is recorded, and its trail can still be read by its username', async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'bob' } }), 201);
    expectData(await admin().call('DELETE', '/accounts/bob'));
    const entries: Entry[] = expectData(await admin().call('GET', '/audit?username=bob'));
    assert.deepEqual(entries.map((entry) => entry.action), ['account.deleted', 'account.created']);
  });

  test('admin tokens made and revoked by the CLI are recorded with actor cli:<os user>', async () => {
    const token = await makeAdminToken(admin().workspace, 'short');
    await cliOk(admin().workspace, ['admin-tokens', 'revoke', token.slice(11, 23)]);
    const entries: Entry[] = expectData(await admin().call('GET', '/audit?limit=100'));
    const ofToken = entries.filter((entry) => entry.action.startsWith('admin_token.') && JSON.stringify(entry.changes).includes(token.slice(11, 23)));
    assert.deepEqual(ofToken.map((entry) => [entry.action, entry.actor]), [
      ['admin_token.revoked', `cli:${userInfo().username}`],
      ['admin_token.created', `cli:${userInfo().username}`],
    ]);
    assert.ok(!JSON.stringify(entries).includes(token), 'an entry holds an admin token');
  });

  test('pages newest first with a cursor; since (inclusive) and until (exclusive) filter by time', async () => {
    const all: Entry[] = expectData(await admin().call('GET', '/audit?limit=100'));
    assert.ok(all.length >= 8);
    assert.deepEqual(all.map((entry) => entry.id), [...all.map((entry) => entry.id)].sort((a, b) => b - a), 'not newest first');
    const walked: number[] = [];
    let cursor: string | null = null;
    do {
      const result = await admin().call('GET', `/audit?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      walked.push(...expectData(result).map((entry: Entry) => entry.id));
      cursor = result.body.meta.next_cursor;
    } while (cursor !== null);
    assert.deepEqual(walked, all.map((entry) => entry.id));
    const middle = all[Math.floor(all.length / 2)]!;
    const since: Entry[] = expectData(await admin().call('GET', `/audit?limit=100&since=${encodeURIComponent(middle.occurred_at)}`));
    assert.ok(since.every((entry) => entry.occurred_at >= middle.occurred_at) && since.some((entry) => entry.id === middle.id));
    const until: Entry[] = expectData(await admin().call('GET', `/audit?limit=100&until=${encodeURIComponent(middle.occurred_at)}`));
    assert.ok(until.every((entry) => entry.occurred_at < middle.occurred_at));
    assert.deepEqual(expectData(await admin().call('GET', '/audit?until=2000-01-01')), []);
  });

  test('actor and action filter exactly, together with username, and page by the same cursor', async () => {
    const other = await makeAdminToken(admin().workspace, 'second');
    const asOther = (method: string, path: string, form?: Record<string, string>) =>
      call(method, `${admin().admin}${path}`, { auth: bearer(other), ...(form === undefined ? {} : { form }) });
    expectData(await asOther('POST', '/accounts', { username: 'erin' }), 201);
    expectData(await asOther('PATCH', '/accounts/erin', { premium: 'true' }));
    expectData(await admin().call('PATCH', '/accounts/erin', { form: { premium: 'false' } }));
    const otherActor = `admin:${other.slice(11, 23)}`;
    const byOther: Entry[] = expectData(await admin().call('GET', `/audit?actor=${encodeURIComponent(otherActor)}`));
    assert.deepEqual(byOther.map((entry) => [entry.action, entry.username]), [
      ['account.premium_changed', 'erin'],
      ['account.created', 'erin'],
    ]);
    assert.ok(byOther.every((entry) => entry.actor === otherActor));
    const premiumOfErin: Entry[] = expectData(await admin().call('GET', '/audit?username=erin&action=account.premium_changed'));
    assert.deepEqual(premiumOfErin.map((entry) => [entry.actor, entry.changes.premium.new]), [
      [`admin:${tokenId()}`, false],
      [otherActor, true],
    ]);
    const both: Entry[] = expectData(await admin().call('GET', `/audit?actor=${encodeURIComponent(otherActor)}&action=account.premium_changed`));
    assert.deepEqual(both.map((entry) => entry.username), ['erin']);
    assert.deepEqual(expectData(await admin().call('GET', `/audit?actor=${encodeURIComponent(otherActor.toUpperCase())}`)), [], 'the actor matched ignoring case');
    assert.deepEqual(expectData(await admin().call('GET', '/audit?actor=admin:')), [], 'the actor matched as a prefix');
    const first = await admin().call('GET', `/audit?actor=${encodeURIComponent(otherActor)}&limit=1`);
    assert.deepEqual(expectData(first).map((entry: Entry) => entry.action), ['account.premium_changed']);
    const second = await admin().call('GET', `/audit?actor=${encodeURIComponent(otherActor)}&limit=1&cursor=${first.body.meta.next_cursor}`);
    assert.deepEqual(expectData(second).map((entry: Entry) => entry.action), ['account.created']);
    assert.equal(second.body.meta.next_cursor, null);
  });

  test('the CLI reads the same filters: audit --actor --action', async () => {
    const entries = JSON.parse(
      (await cliOk(admin().workspace, ['audit', '--actor', `admin:${tokenId()}`, '--action', 'account.created', '--json'])),
    ) as { actor: string; action: string; username: string }[];
    assert.ok(entries.length > 0, 'no entries of this token');
    assert.ok(entries.every((entry) => entry.actor === `admin:${tokenId()}` && entry.action === 'account.created'), JSON.stringify(entries));
    assert.ok(entries.some((entry) => entry.username === 'alice'));
  });
});
