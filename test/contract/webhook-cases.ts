// The store contract for webhooks: the outbox written with each audited change, claims under a lease, attempts, disabling.
import assert from 'node:assert/strict';
import { requiring } from '../support/requiring.ts';
import { cliActor } from '../../src/operations/actor.ts';
import type { Store } from '../../src/store/store.ts';
import { MAX_WEBHOOK_ENDPOINTS, type AttemptOutcome, type ClaimedDelivery } from '../../src/store/webhooks/webhook-store.ts';
import { issueKey } from '../../src/domain/api-keys.ts';
import { account, domainCode, freshStore, newKey, type MakeStore } from './contract-support.ts';

const actor = cliActor('tester');
const FAR = new Date('2100-01-01T00:00:00Z');

function endpoint(id: string, eventTypes: string[] | null = null) {
  return { endpointId: id, url: `http://127.0.0.1:9/${id}`, description: null, eventTypes, secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0' };
}

/** Everything due now, leased far into the future to `owner`. */
const claimAll = (store: Store, owner = 'tester') => store.claimWebhookDeliveries(owner, 1000, new Date(), FAR);

function outcome(overrides: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    attemptedAt: new Date(),
    status: 500,
    latencyMs: 12,
    response: 'down',
    error: null,
    succeeded: false,
    nextAttemptAt: new Date(Date.now() + 60_000),
    disableIfFailingSince: new Date(Date.now() - 86_400_000),
    ...overrides,
  };
}

const typeOf = (claim: ClaimedDelivery) => JSON.parse(claim.payload).type as string;

export function defineWebhookCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  const { describe, test } = requiring(skip);

  describe(`${engineName} store: webhooks`, () => {
    test('an audited change queues its event for each enabled endpoint subscribed to it; an unaudited one queues nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createWebhookEndpoint(endpoint('we_keys', ['key.created']));
      await store.createWebhookEndpoint(endpoint('we_off'));
      await store.setWebhookEndpointEnabled('we_off', false, 'by hand');
      await store.createAccount(account('quiet'));
      const created = await store.createAccount(account('alice'), actor);
      const claimed = await claimAll(store);
      assert.deepEqual(claimed.map((c) => [c.endpointId, typeOf(c)]), [['we_all', 'account.created']]);
      const event = JSON.parse(claimed[0]!.payload);
      assert.equal(event.id, claimed[0]!.eventId);
      assert.equal(event.data.object.user_id, created.id);
      assert.deepEqual(event.data.changes.username, { old: null, new: 'alice' });
    });

    test('a change rolled back writes no event, even one whose first half was written and audited', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      const key = newKey(issueKey('live'));
      await store.createAccountWithKey(account('alice'), key, actor);
      // bob's account is inserted, and its account.created written, before the key is refused: all of it is rolled back.
      await assert.rejects(store.createAccountWithKey(account('bob'), key, actor), domainCode('key_exists'));
      const types = (await claimAll(store)).map((claim) => `${typeOf(claim)} ${JSON.parse(claim.payload).data.object.username}`);
      assert.deepEqual(types, ['account.created alice', 'key.created alice']);
      assert.equal((await store.webhookOutboxStats()).pending, 2);
    });

    test('two stores claiming at once never get the same delivery, and a lease hides a delivery until it ends', async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      const other = subject.openAnother();
      await store.createWebhookEndpoint(endpoint('we_all'));
      for (let i = 0; i < 20; i++) await store.createAccount(account(`user${i}`), actor);
      const now = new Date();
      const [mine, theirs] = await Promise.all([
        store.claimWebhookDeliveries('a', 15, now, FAR),
        other.claimWebhookDeliveries('b', 15, now, FAR),
      ]);
      const ids = [...mine, ...theirs].map((c) => c.deliveryId);
      assert.equal(ids.length, 20, 'every delivery claimed by one or the other');
      assert.equal(new Set(ids).size, 20, 'no delivery claimed twice');
      assert.equal((await claimAll(store, 'c')).length, 0, 'leased deliveries are nobody else’s');
      await store.releaseWebhookDeliveries('a');
      assert.equal((await claimAll(store, 'c')).length, mine.length, 'released leases are claimable at once');
    });

    test('an attempt by a claimer whose lease was taken over is recorded but changes nothing', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAccount(account('alice'), actor);
      const now = new Date();
      const [stale] = await store.claimWebhookDeliveries('old', 1, now, new Date(now.getTime() + 1));
      await new Promise((resolve) => setTimeout(resolve, 10));
      const [current] = await claimAll(store, 'new');
      assert.equal(current!.deliveryId, stale!.deliveryId, 'an expired lease is claimable');
      await store.recordWebhookAttempt(stale!, outcome({ succeeded: true, status: 200, nextAttemptAt: null }));
      await store.recordWebhookAttempt(current!, outcome({ nextAttemptAt: new Date(Date.now() - 1) }));
      assert.equal((await claimAll(store, 'again')).length, 1, 'the current claimer’s failure decides: due again');
      assert.equal((await store.listWebhookAttempts('we_all', 10)).length, 2, 'both attempts are in the history');
    });

    test('failures past the limit disable the endpoint with the reason; a success ends the run of failures', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAccount(account('alice'), actor);
      await store.createAccount(account('bob'), actor);
      const [first, second] = await claimAll(store);
      const failedAt = new Date(Date.now() - 10_000);
      assert.deepEqual(await store.recordWebhookAttempt(first!, outcome({ attemptedAt: failedAt, disableIfFailingSince: new Date(0) })), { disabled: false });
      const disabled = await store.recordWebhookAttempt(second!, outcome({ status: null, error: 'ECONNREFUSED', disableIfFailingSince: new Date() }));
      assert.deepEqual(disabled, { disabled: true });
      const [listed] = await store.listWebhookEndpoints(null, 100);
      assert.notEqual(listed!.disabledAt, null);
      assert.match(listed!.disabledReason!, /every delivery failed since .*ECONNREFUSED/);
      assert.equal((await claimAll(store)).length, 0, 'nothing is claimed for a disabled endpoint');
      const enabled = await store.setWebhookEndpointEnabled('we_all', true);
      assert.equal(enabled.failingSince, null);
      assert.equal(enabled.disabledReason, null);
    });

    test("a success to a healthy endpoint does not write the endpoint's row; one after failures clears them", async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAccount(account('alice'), actor);
      await store.createAccount(account('bob'), actor);
      await store.createAccount(account('carol'), actor);
      const [first, second, third] = await claimAll(store);
      const healthy = await subject.endpointRowVersion('we_all');
      await store.recordWebhookAttempt(first!, outcome({ succeeded: true, status: 204, nextAttemptAt: null }));
      assert.equal(await subject.endpointRowVersion('we_all'), healthy, "a healthy endpoint's row was written for a success");
      await store.recordWebhookAttempt(second!, outcome());
      assert.notEqual((await store.listWebhookEndpoints(null, 100))[0]!.failingSince, null);
      await store.recordWebhookAttempt(third!, outcome({ succeeded: true, status: 200, nextAttemptAt: null }));
      assert.equal((await store.listWebhookEndpoints(null, 100))[0]!.failingSince, null, 'a success did not end the run of failures');
    });

    test('redelivery queues the event again with the same id; unknown ids are refused', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAccount(account('alice'), actor);
      const [claim] = await claimAll(store);
      await store.recordWebhookAttempt(claim!, outcome({ succeeded: true, status: 204, nextAttemptAt: null }));
      assert.deepEqual(await store.redeliverWebhookEvent(claim!.eventId, null, new Date()), ['we_all']);
      const [again] = await claimAll(store);
      assert.equal(again!.eventId, claim!.eventId);
      assert.equal(again!.payload, claim!.payload, 'the same bytes');
      await assert.rejects(store.redeliverWebhookEvent('evt_nope', null, new Date()), domainCode('webhook_event_not_found', 'not_found'));
      await assert.rejects(store.removeWebhookEndpoint('we_nope'), domainCode('webhook_endpoint_not_found', 'not_found'));
    });

    test('pruning the audit trail prunes delivered events with it, never one still pending', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAccount(account('alice'), actor);
      await store.createAccount(account('bob'), actor);
      const [delivered] = await store.claimWebhookDeliveries('tester', 1, new Date(), FAR);
      await store.recordWebhookAttempt(delivered!, outcome({ succeeded: true, status: 204, nextAttemptAt: null }));
      await store.pruneAudit(new Date(Date.now() + 60_000));
      await assert.rejects(store.redeliverWebhookEvent(delivered!.eventId, null, new Date()), domainCode('webhook_event_not_found'));
      assert.equal((await store.webhookOutboxStats()).pending, 1, "bob's event, still pending, is kept");
    });

    test(`at most ${MAX_WEBHOOK_ENDPOINTS} endpoints, however many are added at once through two stores; removing one frees a place`, async (t) => {
      const subject = await freshStore(t, makeStore);
      const { store } = subject;
      assert.equal(MAX_WEBHOOK_ENDPOINTS, 100, 'docs/api.md and docs/operations.md say 100');
      for (let i = 0; i < 95; i++) await store.createWebhookEndpoint(endpoint(`we_before${String(i).padStart(3, '0')}`));
      const stores = [store, subject.openAnother()];
      const racing = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => stores[i % 2]!.createWebhookEndpoint(endpoint(`we_race${String(i).padStart(2, '0')}`))));
      const added = racing.filter((result) => result.status === 'fulfilled');
      const refused = racing.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
      assert.equal(added.length, 5, `${added.length} of 12 concurrent adds went in with 95 endpoints already there`);
      for (const { reason } of refused) assert.ok(domainCode('too_many_webhook_endpoints', 'conflict')(reason), String(reason));
      assert.equal((await store.listWebhookEndpoints(null, 1000)).length, 100);
      await assert.rejects(store.createWebhookEndpoint(endpoint('we_one_more')), domainCode('too_many_webhook_endpoints', 'conflict'));
      await store.removeWebhookEndpoint('we_before000');
      await store.createWebhookEndpoint(endpoint('we_one_more'));
      await assert.rejects(store.createWebhookEndpoint(endpoint('we_two_more')), /already 100 webhook endpoints.*remove one first/);
    });

    test('endpoints are listed a page at a time, oldest first, each page after the last endpoint of the one before', async (t) => {
      const { store } = await freshStore(t, makeStore);
      const ids = ['we_page_c', 'we_page_a', 'we_page_d', 'we_page_b', 'we_page_e'];
      for (const id of ids) await store.createWebhookEndpoint(endpoint(id));
      const all = await store.listWebhookEndpoints(null, 100);
      assert.deepEqual(
        all.map((e) => e.endpointId),
        [...all].sort((a, b) => (a.createdAt === b.createdAt ? (a.endpointId < b.endpointId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1)).map((e) => e.endpointId),
        'oldest first, then by id',
      );
      assert.deepEqual(new Set(all.map((e) => e.endpointId)), new Set(ids));
      const first = await store.listWebhookEndpoints(null, 2);
      const second = await store.listWebhookEndpoints(first.at(-1)!, 2);
      // The endpoint a cursor names may be removed meanwhile: the next page still starts after where it was.
      await store.removeWebhookEndpoint(second.at(-1)!.endpointId);
      const third = await store.listWebhookEndpoints(second.at(-1)!, 2);
      assert.deepEqual([...first, ...second, ...third].map((e) => e.endpointId), all.map((e) => e.endpointId));
      assert.deepEqual(await store.listWebhookEndpoints(all.at(-1)!, 2), []);
    });

    test('admin token changes are audited but are not webhook events', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      await store.createAdminToken({ tokenId: 'tok123456789', hash: new Uint8Array(32), displayPrefix: 'aapi_admin_tok1', label: 'ops', createdBy: 'cli:t' }, actor);
      assert.equal((await store.listAudit()).length, 1);
      assert.equal((await claimAll(store)).length, 0);
    });

    test('an endpoint is read with its secret as stored, disabled or not; an unknown one is webhook_endpoint_not_found', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all', ['key.revoked']));
      await store.setWebhookEndpointEnabled('we_all', false, 'by hand');
      const { endpoint: read, secret } = await store.webhookEndpointWithSecret('we_all');
      assert.equal(secret, endpoint('we_all').secret);
      assert.equal(read.endpointId, 'we_all');
      assert.equal(read.url, endpoint('we_all').url);
      assert.deepEqual(read.eventTypes, ['key.revoked']);
      assert.equal(read.disabledReason, 'by hand');
      await assert.rejects(store.webhookEndpointWithSecret('we_none'), domainCode('webhook_endpoint_not_found'));
    });

    test('a webhook_endpoint.tested entry is audited but is not a webhook event', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.createWebhookEndpoint(endpoint('we_all'));
      const changes = { endpoint_id: { old: null, new: 'we_all' }, status: { old: null, new: 204 } };
      await store.recordAudit({ action: 'webhook_endpoint.tested', accountId: null, username: null, changes }, actor);
      const [entry] = await store.listAudit();
      assert.equal(entry!.action, 'webhook_endpoint.tested');
      assert.deepEqual(entry!.changes, changes);
      assert.equal((await claimAll(store)).length, 0, 'a test event is sent by the operation itself, never queued');
    });
  });
}
