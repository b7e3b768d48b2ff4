// The sandbox's demo accounts and their well-known keys, seeded on every sandbox start.
import { createHash } from 'node:crypto';
import { composeKey, type IssuedKey } from '../domain/api-keys.ts';
import type { Store } from '../store/store.ts';

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

/** Creates what is missing and restores Premium; names and timezones that callers changed are kept. */
export async function seedDemoAccounts(store: Store): Promise<DemoAccount[]> {
  const accounts = demoAccounts();
  for (const demo of accounts) {
    const existing = await store.findAccount(demo.username);
    if (existing === null) {
      await store.createAccount({ username: demo.username, name: demo.name, timezone: demo.timezone, premium: demo.premium });
    } else if (existing.premium !== demo.premium) {
      await store.setPremium(demo.username, demo.premium);
    }
    const credential = await store.findCredential(demo.key.keyId);
    if (credential === null) {
      await store.createKey(demo.username, {
        keyId: demo.key.keyId,
        hash: demo.key.hash,
        displayPrefix: demo.key.displayPrefix,
        label: 'sandbox demo key',
      });
    }
  }
  return accounts;
}
