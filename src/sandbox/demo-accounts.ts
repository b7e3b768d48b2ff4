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

/** Where the seed says that a demo account is unavailable; the server's start-up log. */
export interface SeedLog {
  warn(details: object, message: string): void;
}

/**
 * Makes sure each demo account exists with its published key, and returns those that do. The seed's own accounts are the ones
 * holding its key: it creates an account only together with that key (createAccountWithKey), and never attaches the key to an
 * account that exists. So it never changes an account the key did not already open: one of that name that someone else created
 * is left exactly as it is, and reported unavailable. On its own accounts it restores Premium, as the README shows it; names and
 * timezones that callers changed are kept.
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

/** The account holding this demo's key, created with it if no account has its name; null when another account has the name. */
async function seededAccount(store: Store, demo: DemoAccount): Promise<{ account: Account | null; revoked: boolean }> {
  // Twice at most: a second sandbox instance seeding the same database at the same moment makes the first attempt conflict.
  for (let attempt = 0; ; attempt++) {
    // The account first, then the key: the seed creates both in one transaction, so once the account is seen its key is too.
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
