// Keys this process has recently seen to be right, remembered by their hash, so that a valid key is never refused by the
// failed-attempt budget of an address it shares with guessers (a NAT, an office, a proxy without TRUST_PROXY).
//
// It decides only who spends that budget: the request is still authenticated by the store as usual (revocation is seen on
// the very next request), and a remembered key that then fails is forgotten, so it spends the budget like any guess.
import { digestMatches } from '../../domain/api-keys.ts';

interface Remembered {
  readonly hash: Uint8Array;
  /** The username, in lower case. */
  readonly owner: string;
}

export class VerifiedKeys {
  readonly #max: number;
  readonly #keys = new Map<string, Remembered>();

  /** At most `max` keys; past it the oldest is forgotten (it then spends an attempt once, and is remembered again). */
  constructor(max = 10_000) {
    this.#max = max;
  }

  /** True when this exact key (same digest, keyDigest) was seen right for this owner (a username in lower case), compared in constant time. */
  vouchesFor(keyId: string, digest: string, owner: string): boolean {
    const remembered = this.#keys.get(keyId);
    if (remembered === undefined) return false;
    return digestMatches(digest, remembered.hash) && remembered.owner === owner;
  }

  /** `hash`: the stored hash the key was found right against; `owner`: the username, in lower case. */
  remember(keyId: string, hash: Uint8Array, owner: string): void {
    if (this.#keys.size >= this.#max && !this.#keys.has(keyId)) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    this.#keys.set(keyId, { hash, owner });
  }

  forget(keyId: string): void {
    this.#keys.delete(keyId);
  }
}
