// Contract cases for the schema and the store's life: migrations applied once and in order, a newer schema refused, the
// environment a database records (set once by migrate, refused to a store of the other environment, inferred from the keys
// of a database made before it was recorded, decided by exactly one of two racing first migrations), and closing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { requiring } from '../support/requiring.ts';

import { issueKey, type KeyEnvironment } from '../../src/domain/api-keys.ts';
import { loadMigrations } from '../../src/store/migrations.ts';
import type { Store } from '../../src/store/store.ts';
import { account, domainCode, freshStore, isDate, newKey, type MakeStore, type StoreUnderTest } from './contract-support.ts';

/** Both engines have one migration per version, twins of each other: a schema is current with this many. */
const MIGRATION_COUNT = loadMigrations(join(import.meta.dirname, '../../src/store/sqlite/migrations')).length;

const mismatch = domainCode('database_environment_mismatch', 'internal');
const undecided = domainCode('database_environment_undecided', 'internal');

function namesBoth(error: unknown): boolean {
  const message = (error as Error).message;
  assert.match(message, /\blive\b/, `the refusal should name the live environment: ${message}`);
  assert.match(message, /\bsandbox\b/, `the refusal should name the sandbox: ${message}`);
  return true;
}

async function refusedBoth(store: Store, check: (error: unknown) => boolean, what: string): Promise<void> {
  await assert.rejects(store.migrate(), (error) => check(error) && namesBoth(error), `${what}: migrate`);
}

/** A database as a build from before migration 002 left it, holding accounts and the keys asked for (revoked ones too). */
async function version1Database(t: TestContext, makeStore: MakeStore, keys: readonly KeyEnvironment[]): Promise<StoreUnderTest> {
  const subject = await freshStore(t, makeStore, { migrated: false });
  await subject.migrateLikeVersion1();
  await subject.store.createAccount(account('old-timer', { premium: true }));
  await subject.store.createAccount(account('keyless'));
  for (const environment of keys) {
    // Behind the store's back: today's store writes columns (scope, expiry) that a version 1 schema does not have.
    await subject.addKeyLikeVersion1('old-timer', newKey(issueKey(environment)), true);
    await subject.addKeyLikeVersion1('old-timer', newKey(issueKey(environment)), false);
  }
  return subject;
}
export function defineSchemaCases(engineName: string, makeStore: MakeStore, skip?: string): void {
  // Without the engine every case is still listed, as skipped, so the summary counts them.
  const { describe, test } = requiring(skip);
  describe(`${engineName} store: migrations`, () => {
    test('migrate applies every migration once; a second run applies nothing', async (t) => {
      const { store } = await freshStore(t, makeStore, { migrated: false });
      const first = await store.migrate();
      assert.ok(first.applied.length > 0, 'the first migrate applied nothing');
      assert.deepEqual(first.applied, [...first.applied].sort((a, b) => a - b), 'migrations were not applied in order');
      assert.equal(first.applied.at(-1), first.current, 'the report does not end at the current version');
      const second = await store.migrate();
      assert.deepEqual(second.applied, [], 'the second migrate applied migrations again');
      assert.equal(second.current, first.current);
    });

    test('records each applied migration in schema_migrations', async (t) => {
      const subject = await freshStore(t, makeStore);
      const report = await subject.store.migrate();
      const rows = await subject.migrationRows();
      assert.deepEqual(
        rows.map((row) => row.version),
        Array.from({ length: report.current }, (_, index) => index + 1),
        'one row per migration expected',
      );
      for (const row of rows) {
        assert.match(row.name, /^[a-z0-9_]+$/);
        assert.ok(isDate(row.appliedAt), `applied_at '${row.appliedAt}' is not a date`);
      }
    });

    test('checkSchema fails with schema_outdated before migrate and passes after it', async (t) => {
      const { store } = await freshStore(t, makeStore, { migrated: false });
      await assert.rejects(store.checkSchema(), domainCode('schema_outdated', 'internal'), 'checkSchema passed on an empty database');
      await store.migrate();
      await store.checkSchema();
    });

    test('a schema version newer than the code makes migrate and checkSchema fail with schema_too_new', async (t) => {
      const subject = await freshStore(t, makeStore);
      await subject.recordMigration(999, 'from_the_future');
      const before = await subject.migrationRows();
      await assert.rejects(subject.store.migrate(), domainCode('schema_too_new', 'internal'), 'migrate ran on a newer schema');
      await assert.rejects(subject.store.checkSchema(), domainCode('schema_too_new'), 'checkSchema accepted a newer schema');
      const another = subject.openAnother();
      await assert.rejects(another.checkSchema(), domainCode('schema_too_new'), 'a fresh connection accepted a newer schema');
      await assert.rejects(another.checkSchema(), /newer than this build/, 'the message does not say the schema is newer');
      assert.deepEqual(await subject.migrationRows(), before, 'refusing a newer schema still changed schema_migrations');
    });
  });

  describe(`${engineName} store: the database's environment`, () => {
    test("the first migrate of a new database records the store's environment, and later ones only check it", async (t) => {
      const subject = await freshStore(t, makeStore, { migrated: false });
      const first = await subject.store.migrate();
      assert.equal(first.environment, 'live');
      assert.equal(first.environmentRecorded, 'migrator', 'a new database takes the environment of whoever migrates it first');
      assert.deepEqual(await subject.recordedEnvironment(), { environment: 'live', decidedBy: 'migrator' });
      const again = await subject.openAnother('live').migrate();
      assert.equal(again.environment, 'live');
      assert.equal(again.environmentRecorded, null, 'a second migrate recorded the environment again');
      await subject.store.checkSchema();
    });

    for (const [first, second] of [['live', 'sandbox'], ['sandbox', 'live']] as const) {
      test(`a ${second} store refuses a database recorded as ${first}, in migrate and checkSchema, and changes nothing`, async (t) => {
        const subject = await freshStore(t, makeStore, { migrated: false });
        await subject.openAnother(first).migrate();
        const other = subject.openAnother(second);
        await refusedBoth(other, mismatch, `a ${second} store on a ${first} database`);
        await assert.rejects(other.checkSchema(), mismatch, `a ${second} store passed checkSchema on a ${first} database`);
        await assert.rejects(other.migrate({ recordEnvironment: true }), mismatch, 'the operator override replaced a recorded environment');
        assert.deepEqual(await subject.recordedEnvironment(), { environment: first, decidedBy: 'migrator' });
        await subject.openAnother(first).checkSchema();
      });
    }

    test('checkSchema refuses a database that is current but records no environment', async (t) => {
      const subject = await freshStore(t, makeStore, { migrated: false });
      const keys = ['live', 'sandbox'] as const;
      await subject.migrateLikeVersion1();
      await subject.store.createAccount(account('mixed'));
      for (const environment of keys) await subject.addKeyLikeVersion1('mixed', newKey(issueKey(environment)), false);
      // A refused migrate may leave the schema current (PostgreSQL commits each migration) but never records an environment.
      await assert.rejects(subject.store.migrate(), undecided);
      if ((await subject.migrationRows()).length === MIGRATION_COUNT) {
        await assert.rejects(subject.store.checkSchema(), domainCode('database_environment_unrecorded'));
      } else {
        await assert.rejects(subject.store.checkSchema(), domainCode('schema_outdated'));
      }
    });

    for (const environment of ['live', 'sandbox'] as const) {
      const other = environment === 'live' ? 'sandbox' : 'live';
      test(`a database from before the record that holds only ${environment} keys is ${environment}, whoever migrates it first`, async (t) => {
        const subject = await version1Database(t, makeStore, [environment]);
        await refusedBoth(subject.openAnother(other), mismatch, `a ${other} store on an old ${environment} database`);
        assert.equal((await subject.recordedEnvironment())?.environment ?? environment, environment, `the ${other} store recorded itself`);
        const report = await subject.openAnother(environment).migrate();
        assert.equal(report.environment, environment);
        assert.deepEqual(await subject.recordedEnvironment(), { environment, decidedBy: 'api_keys' });
        await refusedBoth(subject.openAnother(other), mismatch, `a ${other} store after the ${environment} one migrated`);
      });
    }

    test('a database from before the record that holds keys of both environments is refused to both until an operator decides', async (t) => {
      const subject = await version1Database(t, makeStore, ['live', 'sandbox']);
      await refusedBoth(subject.openAnother('live'), undecided, 'a live store on a mixed database');
      await refusedBoth(subject.openAnother('sandbox'), undecided, 'a sandbox store on a mixed database');
      await assert.rejects(subject.openAnother('sandbox').migrate(), /migrate --record-environment/, 'the refusal should say how to decide');
      assert.equal(await subject.recordedEnvironment(), null, 'a refused migrate recorded an environment');

      const decided = await subject.openAnother('sandbox').migrate({ recordEnvironment: true });
      assert.equal(decided.environment, 'sandbox');
      assert.equal(decided.environmentRecorded, 'operator');
      assert.deepEqual(await subject.recordedEnvironment(), { environment: 'sandbox', decidedBy: 'operator' });
      await refusedBoth(subject.openAnother('live'), mismatch, 'a live store after the operator chose the sandbox');
      await assert.rejects(subject.openAnother('live').migrate({ recordEnvironment: true }), mismatch, 'a second decision replaced the first');
    });

    test('a database from before the record with accounts but no key is never claimed by the sandbox unasked; live takes it', async (t) => {
      const subject = await version1Database(t, makeStore, []);
      // It could be a live database whose keys were all deleted: the sandbox, which seeds accounts, must not adopt it.
      await assert.rejects(subject.openAnother('sandbox').migrate(), undecided);
      assert.equal(await subject.recordedEnvironment(), null, 'a refused migrate recorded an environment');
      const report = await subject.openAnother('live').migrate();
      assert.equal(report.environmentRecorded, 'migrator');
      assert.deepEqual(await subject.recordedEnvironment(), { environment: 'live', decidedBy: 'migrator' });
      await refusedBoth(subject.openAnother('sandbox'), mismatch, 'a sandbox store after live migrated');
    });

    test('the operator can still give such a database to the sandbox, with migrate --record-environment', async (t) => {
      const subject = await version1Database(t, makeStore, []);
      const report = await subject.openAnother('sandbox').migrate({ recordEnvironment: true });
      assert.equal(report.environmentRecorded, 'operator');
      assert.deepEqual(await subject.recordedEnvironment(), { environment: 'sandbox', decidedBy: 'operator' });
    });

    test('live and sandbox stores migrating one new database at once: exactly one environment wins, every other store is refused', async (t) => {
      for (let round = 0; round < 3; round++) {
        const subject = await freshStore(t, makeStore, { migrated: false });
        const environments: KeyEnvironment[] = round % 2 === 0 ? ['live', 'sandbox', 'live', 'sandbox'] : ['sandbox', 'live', 'sandbox', 'live'];
        const stores = environments.map((environment) => subject.openAnother(environment));
        const results = await Promise.allSettled(stores.map((store) => store.migrate()));
        const recorded = await subject.recordedEnvironment();
        assert.ok(recorded !== null, `round ${round}: nobody recorded an environment`);
        results.forEach((result, index) => {
          if (environments[index] === recorded.environment) {
            assert.equal(result.status, 'fulfilled', `round ${round}: a ${environments[index]} store was refused its own database: ${String((result as PromiseRejectedResult).reason)}`);
          } else {
            assert.equal(result.status, 'rejected', `round ${round}: a ${environments[index]} store was let in to a ${recorded.environment} database`);
            mismatch(result.reason);
          }
        });
      }
    });
  });

  describe(`${engineName} store: closing`, () => {
    test('close() twice is safe', async (t) => {
      const { store } = await freshStore(t, makeStore);
      await store.close();
      await store.close();
      await assert.rejects(store.findAccount('x'), 'a closed store still answered');
    });
  });
}
