// Protects the store a server uses while its database is down at start: 503 until prepared, back-off, give up only when waiting cannot help.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { DomainError } from '../../../src/domain/errors.ts';
import { ConnectingStore, isStoreUnavailable, type ConnectOptions } from '../../../src/store/connecting-store.ts';
import type { Store } from '../../../src/store/store.ts';

const unreachable = (detail = 'connect ECONNREFUSED 127.0.0.1:5432') =>
  new DomainError('unavailable', 'store_unavailable', 'The database is unreachable; try again shortly.', { cause: new Error(detail) });

/** Only what these tests call; counts what reached it. */
function fakeEngine() {
  const calls = { countAccounts: 0, close: 0 };
  const engine = {
    engine: 'fake',
    countAccounts: async () => {
      calls.countAccounts++;
      return 7;
    },
    ping: async () => undefined,
    close: async () => {
      calls.close++;
    },
  } as unknown as Store;
  return { engine, calls };
}

function recordingLog() {
  const lines: Array<{ level: 'info' | 'warn'; fields: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    info: (fields: object, message: string) => lines.push({ level: 'info', fields: fields as Record<string, unknown>, message }),
    warn: (fields: object, message: string) => lines.push({ level: 'warn', fields: fields as Record<string, unknown>, message }),
  };
}

/** prepare fails with each of `failures` in turn, then resolves with 'prepared'. */
function scripted(failures: unknown[]): { prepare: ConnectOptions<string>['prepare']; attempts: () => number } {
  let attempts = 0;
  return {
    prepare: async () => {
      const failure = failures[attempts++];
      if (failure !== undefined) throw failure;
      return 'prepared';
    },
    attempts: () => attempts,
  };
}

const quick = { firstMs: 1, maxMs: 4 };

function isCode(code: string) {
  return (error: unknown) => error instanceof DomainError && error.code === code;
}

describe('ConnectingStore', () => {
  test('fails every call with store_unavailable, without touching the engine, until prepared; then calls reach the engine', async () => {
    const { engine, calls } = fakeEngine();
    const store = new ConnectingStore(engine);
    const log = recordingLog();
    await assert.rejects(store.countAccounts(), isCode('store_unavailable'));
    await assert.rejects(store.ping(), isCode('store_unavailable'), 'readiness must fail while waiting');
    assert.equal(calls.countAccounts, 0, 'a call while waiting reached the engine');

    const script = scripted([unreachable(), unreachable()]);
    const ready = store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log, target: 'the fake', delays: quick });
    await assert.rejects(store.countAccounts(), isCode('store_unavailable'));
    assert.equal(await ready, 'prepared');
    assert.equal(script.attempts(), 3);
    assert.equal(await store.countAccounts(), 7);
    assert.equal(calls.countAccounts, 1);
    const connected = log.lines.filter((line) => line.level === 'info');
    assert.equal(connected.length, 1);
    assert.equal(connected[0]!.fields.attempts, 3);
    assert.equal(store.engine, 'fake');
  });

  test('a failure that waiting cannot cure ends the wait: connect rejects with it, and calls still fail with store_unavailable', async () => {
    const { engine } = fakeEngine();
    const store = new ConnectingStore(engine);
    const tooNew = new DomainError('internal', 'schema_too_new', 'The database schema is at version 9.');
    const script = scripted([unreachable(), tooNew]);
    await assert.rejects(
      store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log: recordingLog(), target: 'the fake', delays: quick }),
      (error) => error === tooNew,
    );
    assert.equal(script.attempts(), 2, 'it tried again after giving up');
    await assert.rejects(store.ping(), isCode('store_unavailable'));
  });

  test('logs the first failed attempt and a changed reason, not every attempt', async () => {
    const { engine } = fakeEngine();
    const store = new ConnectingStore(engine);
    const log = recordingLog();
    const script = scripted([...Array.from({ length: 20 }, () => unreachable()), unreachable('getaddrinfo ENOTFOUND db.internal')]);
    await store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log, target: 'the fake', delays: quick });
    const warnings = log.lines.filter((line) => line.level === 'warn');
    assert.deepEqual(
      warnings.map((line) => [line.fields.attempts, line.fields.reason]),
      [
        [1, 'The database is unreachable; try again shortly. (connect ECONNREFUSED 127.0.0.1:5432)'],
        [21, 'The database is unreachable; try again shortly. (getaddrinfo ENOTFOUND db.internal)'],
      ],
    );
    assert.equal(warnings[0]!.message, 'waiting for the database: retrying');
  });

  test('waits longer after each failure, up to the cap, never longer', async () => {
    const { engine } = fakeEngine();
    const store = new ConnectingStore(engine);
    const log = recordingLog();
    // A new reason each time, so that every attempt is logged with its wait.
    const script = scripted(Array.from({ length: 6 }, (_, index) => unreachable(`refused ${index}`)));
    await store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log, target: 'the fake', delays: { firstMs: 8, maxMs: 32 } });
    const waits = log.lines.filter((line) => line.level === 'warn').map((line) => line.fields.retryInMs as number);
    const nominal = [8, 16, 32, 32, 32, 32];
    waits.forEach((wait, index) => {
      assert.ok(wait >= nominal[index]! / 2 && wait <= nominal[index]!, `wait ${index + 1} was ${wait} ms; expected ${nominal[index]! / 2}-${nominal[index]} ms`);
    });
  });

  test('the failure the caller already met counts as the first attempt, and the next one waits', async () => {
    const { engine } = fakeEngine();
    const store = new ConnectingStore(engine);
    const log = recordingLog();
    const script = scripted([]);
    const ready = store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log, target: 'the fake', firstFailure: unreachable(), delays: quick });
    assert.equal(script.attempts(), 0, 'it tried again at once');
    await ready;
    assert.equal(script.attempts(), 1);
    assert.equal(log.lines.find((line) => line.level === 'info')!.fields.attempts, 2);
  });

  test('retryNow ends the wait at once', async () => {
    const { engine } = fakeEngine();
    const store = new ConnectingStore(engine);
    const script = scripted([]);
    const long = { firstMs: 60_000, maxMs: 60_000 };
    const ready = store.connect({ prepare: script.prepare, retryable: isStoreUnavailable, log: recordingLog(), target: 'the fake', firstFailure: unreachable(), delays: long });
    store.retryNow();
    assert.equal(await ready, 'prepared');
    store.retryNow(); // nothing to do once connected
    assert.equal(script.attempts(), 1);
  });

  test('close stops the attempts and closes the engine', async () => {
    const { engine, calls } = fakeEngine();
    const store = new ConnectingStore(engine);
    const script = scripted(Array.from({ length: 1000 }, () => unreachable()));
    let settled = false;
    store
      .connect({ prepare: script.prepare, retryable: isStoreUnavailable, log: recordingLog(), target: 'the fake', delays: quick })
      .finally(() => (settled = true));
    while (script.attempts() < 3) await new Promise((resolve) => setTimeout(resolve, 1));
    await store.close();
    const attemptsAtClose = script.attempts();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.ok(script.attempts() <= attemptsAtClose + 1, 'it kept trying after close');
    assert.equal(calls.close, 1);
    assert.equal(settled, false, 'connect settled after close');
  });

  test('once prepared, passes the actor, conditions and idempotency keys through to the engine untouched', async () => {
    const seen: unknown[][] = [];
    const record =
      (name: string) =>
      async (...args: unknown[]) => {
        seen.push([name, ...args]);
        return name === 'claimIdempotencyKey' ? { state: 'claimed' } : undefined;
      };
    const engine = {
      engine: 'fake',
      updateName: record('updateName'),
      updateTimezone: record('updateTimezone'),
      claimIdempotencyKey: record('claimIdempotencyKey'),
      completeIdempotencyKey: record('completeIdempotencyKey'),
      releaseIdempotencyKey: record('releaseIdempotencyKey'),
      pruneIdempotencyKeys: record('pruneIdempotencyKeys'),
      close: async () => undefined,
    } as unknown as Store;
    const store = new ConnectingStore(engine);
    await assert.rejects(store.claimIdempotencyKey({} as never), isCode('store_unavailable'));
    await assert.rejects(store.pruneIdempotencyKeys(), isCode('store_unavailable'));
    await store.connect({ prepare: async () => 'prepared', retryable: isStoreUnavailable, log: recordingLog(), target: 'the fake', delays: quick });
    const actor = { actor: 'key:AAAABBBBCCCC', requestId: 'r1', address: '203.0.113.7' };
    const options = { expect: () => true };
    const held = { accountId: 1, key: 'k', token: 't' };
    await store.updateName(1, 'n', actor, options);
    await store.updateTimezone(1, 'UTC', actor, options);
    await store.claimIdempotencyKey({ ...held, fingerprint: 'f', leaseMs: 1, ttlMs: 2 });
    await store.completeIdempotencyKey(held, { status: 200, headers: {}, body: new Uint8Array() });
    await store.releaseIdempotencyKey(held);
    await store.pruneIdempotencyKeys();
    assert.deepEqual(
      seen.map(([name]) => name),
      ['updateName', 'updateTimezone', 'claimIdempotencyKey', 'completeIdempotencyKey', 'releaseIdempotencyKey', 'pruneIdempotencyKeys'],
    );
    assert.equal(seen[0]![3], actor, 'updateName lost its actor');
    assert.equal(seen[0]![4], options, 'updateName lost its conditions');
    assert.equal(seen[1]![3], actor, 'updateTimezone lost its actor');
    assert.equal(seen[1]![4], options, 'updateTimezone lost its conditions');
  });
});

describe('forwarding every store method without a list', () => {
  test('a method an engine gains is forwarded by the connecting store (refused before connecting) and traced by the traced store', async () => {
    // An engine with one method no wrapper has ever heard of: adding a store method must not need an edit of either wrapper.
    const engine = { engine: 'fake', environment: 'live', brandNewMethod: async (value: number) => value * 2, close: async () => undefined } as unknown as Store & {
      brandNewMethod(value: number): Promise<number>;
    };
    const connecting = new ConnectingStore(engine) as unknown as typeof engine;
    await assert.rejects(connecting.brandNewMethod(2), isCode('store_unavailable'));
    await (connecting as unknown as ConnectingStore).connect({ prepare: async () => 'ok', retryable: () => true, log: recordingLog(), target: 'fake' });
    assert.equal(await connecting.brandNewMethod(21), 42, 'a connected store did not forward a method it was never told of');
    await connecting.close();
  });
});
