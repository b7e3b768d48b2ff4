// The client's ETags, If-Match and Idempotency-Key against the real server: reads give their ETag, a stale one is refused
// with 412, a keyed write is sent once more after a lost answer and changes nothing twice.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AccountApiClient } from '../../client/src/index.ts';
import { call } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { expectApiError, recordingFetch, recordingSleep } from './recording.ts';

let workspace: Workspace;
let server: ServerProcess;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

const clientFor = (account: Account, options: ConstructorParameters<typeof AccountApiClient>[0] = {}) =>
  new AccountApiClient({ baseUrl: server.url, username: account.username, apiKey: account.key, ...options });

/** A fetch whose first POST reaches the server but whose answer is lost on the way back, as a dropped connection would. */
function losingFirstAnswer(): { fetch: typeof globalThis.fetch; posts: number } {
  const state = { posts: 0 };
  const fetchOnce: typeof globalThis.fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST' && state.posts++ === 0) {
      await response.arrayBuffer();
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    }
    return response;
  };
  return {
    fetch: fetchOnce,
    get posts() {
      return state.posts;
    },
  };
}

describe('ETags and If-Match', () => {
  test('getUserWithEtag and getSettingsWithEtag give the data and the ETag the server sent', async () => {
    const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
    const client = clientFor(alice);
    const user = await client.getUserWithEtag();
    assert.deepEqual(user.data, await client.getUser());
    assert.equal(user.etag, (await call('GET', `${server.api}/user`, { auth: alice })).headers.get('etag'));
    const settings = await client.getSettingsWithEtag();
    assert.deepEqual(settings, { data: { timezone: 'UTC' }, etag: (await call('GET', `${server.api}/settings`, { auth: alice })).headers.get('etag') });
  });

  test('a write with the current ETag as ifMatch succeeds; with a stale one it throws 412 precondition_failed and writes nothing', async () => {
    const bob = await createAccount(workspace, 'bob', { name: 'Bob' });
    const client = clientFor(bob);
    const { etag } = await client.getUserWithEtag();
    const { fetch, exchanges } = recordingFetch();
    assert.equal((await clientFor(bob, { fetch }).updateUser({ name: 'Bob Two' }, { ifMatch: etag })).name, 'Bob Two');
    assert.equal(exchanges[0]?.requestHeaders.get('if-match'), etag);
    await expectApiError(() => client.updateUser({ name: 'Lost update' }, { ifMatch: etag }), { status: 412, code: 'precondition_failed' });
    const settings = await client.getSettingsWithEtag();
    await client.updateSettings({ timezone: 'Asia/Tokyo' });
    await expectApiError(() => client.updateSettings({ timezone: 'Europe/Paris' }, { ifMatch: settings.etag }), {
      status: 412,
      code: 'precondition_failed',
    });
    assert.deepEqual(await client.getUser(), { ...(await client.getUser()), name: 'Bob Two', timezone: 'Asia/Tokyo' });
  });
});

describe('idempotencyKey', () => {
  test('is sent as Idempotency-Key; the same key again gets the first answer', async () => {
    const carol = await createAccount(workspace, 'carol', { name: 'Carol' });
    const { fetch, exchanges } = recordingFetch();
    const client = clientFor(carol, { fetch });
    const key = randomUUID();
    const first = await client.updateUser({ name: 'Carol Once' }, { idempotencyKey: key });
    await client.updateUser({ name: 'Carol Later' });
    assert.deepEqual(await client.updateUser({ name: 'Carol Once' }, { idempotencyKey: key }), first, 'the repeat did not answer as the first');
    assert.equal(exchanges[0]?.requestHeaders.get('idempotency-key'), key);
    assert.equal(exchanges[2]?.responseHeaders?.get('idempotent-replayed'), 'true');
    assert.equal((await client.getUser()).name, 'Carol Later', 'the repeat wrote again');
  });

  test('a keyed write whose answer was lost is sent again and answered as the first time, written once', async () => {
    const dave = await createAccount(workspace, 'dave', { timezone: 'UTC' });
    const losing = losingFirstAnswer();
    const { sleep } = recordingSleep();
    const client = clientFor(dave, { fetch: losing.fetch, sleep });
    assert.deepEqual(await client.updateSettings({ timezone: 'Asia/Seoul' }, { idempotencyKey: randomUUID() }), { timezone: 'Asia/Seoul' });
    assert.equal(losing.posts, 2, 'the write was not sent again');
  });

  test('a write without a key whose answer was lost is not sent again: it might have been made', async () => {
    const erin = await createAccount(workspace, 'erin');
    const losing = losingFirstAnswer();
    const { sleep } = recordingSleep();
    await expectApiError(() => clientFor(erin, { fetch: losing.fetch, sleep }).updateUser({ name: 'Erin' }), { status: 0, code: 'network_error' });
    assert.equal(losing.posts, 1);
  });
});
