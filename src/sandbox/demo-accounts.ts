// The sandbox's demo accounts and their well-known keys, seeded on every sandbox start.
import { createHash } from 'node:crypto';
import { composeKey, type IssuedKey } from '../domain/api-keys.ts';
import { isDomainError } from '../domain/errors.ts';
import type { Account, Store } from '../store/store.ts';

export interface DemoAccount {
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly key: IssuedKey;
}

const BASE62 = /[^0-9A-Za-z]/g;

/** Deterministic, so the README can print them; they open nothing but the sandbox's own database. */
function demoKey(seed: string): IssuedKey {
  const digest = createHash('sha512').update(`account-api sandbox ${seed}`).digest('base64').replace(BASE62, '');
  return composeKey('sandbox', digest.slice(0, 12), digest.slice(12, 44));
}

export function demoAccounts(): DemoAccount[] {
  return [
    { username: 'demo', name: 'Demo Premium', timezone: 'Europe/Paris', premium: true, key: demoKey('demo') },
    { username: 'demo-basic', name: 'Demo Basic', timezone: 'UTC', premium: false, key: demoKey('demo-basic') },
  ];
}

export interface SeedLog {
  warn(details: object, message: string): void;
}

/**
 * The seed's accounts are those holding its key: it creates an account only with that key and never attaches the key to an
 * existing one, so someone else's account of that name is left as it is (reported unavailable). Premium is restored; names
 * and timezones callers changed are kept.
 */
export async function seedDemoAccounts(store: Store, log: SeedLog): Promise<DemoAccount[]> {
  const available: DemoAccount[] = [];
  for (const demo of demoAccounts()) {
    const found = await seededAccount(store, demo);
    if (found.account === null) {
      log.warn(
        { username: demo.username },
        `sandbox demo account '${demo.username}' unavailable: an account of that name exists that the sandbox did not create ` +
          `(it does not hold the demo key), and it is left untouched. To have the demo account back, delete that account ` +
          `(account-api users delete ${demo.username} --sandbox) and restart the sandbox.`,
      );
      continue;
    }
    if (found.account.premium !== demo.premium) await store.updatePremium(found.account.id, demo.premium);
    if (found.revoked) {
      log.warn({ username: demo.username }, `sandbox demo account '${demo.username}' unavailable: its demo key has been revoked.`);
      continue;
    }
    available.push(demo);
  }
  return available;
}

/** Null when another account has the name. */
async function seededAccount(store: Store, demo: DemoAccount): Promise<{ account: Account | null; revoked: boolean }> {
  // Twice at most: a second sandbox seeding at the same moment makes the first attempt conflict.
  for (let attempt = 0; ; attempt++) {
    // Account and key are created together, so once the account is seen its key is too.
    const existing = await store.findAccount(demo.username);
    if (existing !== null) {
      const credential = await store.findCredential(demo.key.keyId);
      const own = credential !== null && credential.account.id === existing.id;
      return { account: own ? credential.account : null, revoked: own && credential.revoked };
    }
    try {
      const account = await store.createAccountWithKey(
        { username: demo.username, name: demo.name, timezone: demo.timezone, premium: demo.premium },
        { keyId: demo.key.keyId, hash: demo.key.hash, displayPrefix: demo.key.displayPrefix, label: 'sandbox demo key' },
      );
      return { account, revoked: false };
    } catch (error) {
      if (!(isDomainError(error) && error.kind === 'conflict')) throw error;
      if (attempt > 0) return { account: null, revoked: false };
    }
  }
}
