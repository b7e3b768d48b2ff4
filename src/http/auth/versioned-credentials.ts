// Credentials kept in this process on PostgreSQL + Redis, each trusted only while its account's credentials version is unchanged.
//
// Performance trick. Relies on: the version (src/store/credentials/credential-versions.ts) being read by the budget script
// BEFORE the row, and replaced by every credential change after commit and before acknowledgement (announcing-store.ts); an
// unannounced change is seen within the max age. Guarded by:
// test/unit/http/auth/versioned-credentials.test.ts and test/e2e/cached-credentials.instances.test.ts.
// Figures: docs/operations.md#the-credential-lookup-on-postgresql--redis
import type { Credential } from '../../store/store.ts';

interface Entry {
  readonly credential: Credential;
  readonly version: string;
  readonly readAt: number;
}

export class VersionedCredentials {
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(options: { maxAgeMs: number; maxEntries: number; now?: () => number }) {
    this.#maxAgeMs = options.maxAgeMs;
    this.#maxEntries = options.maxEntries;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Undefined when it must be read again (another version, or past the max age). */
  get(keyId: string, version: string): Credential | undefined {
    const entry = this.#entries.get(keyId);
    if (entry === undefined) return undefined;
    if (entry.version !== version || this.#now() - entry.readAt >= this.#maxAgeMs) {
      this.#entries.delete(keyId);
      return undefined;
    }
    return entry.credential;
  }

  /** `version`: read before `credential`, never after. `askedAt`: when the read was sent, so max age bounds the row's age. */
  set(keyId: string, version: string, credential: Credential, askedAt: number = this.#now()): void {
    if (this.#maxEntries === 0) return;
    if (this.#entries.size >= this.#maxEntries && !this.#entries.has(keyId)) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    // Deleted first, so Map order stays read order and the oldest goes first.
    this.#entries.delete(keyId);
    this.#entries.set(keyId, { credential, version, readAt: askedAt });
  }

  /** Forgets every entry: Redis came back, maybe from a snapshot older than the last announcement (an old version again). */
  clear(): void {
    this.#entries.clear();
  }

  forget(keyId: string): void {
    this.#entries.delete(keyId);
  }
}
