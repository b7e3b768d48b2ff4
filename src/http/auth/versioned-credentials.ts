// Credentials kept in this process on PostgreSQL + Redis, each trusted only while its account's credentials version is unchanged.
//
// Performance trick. Relies on: the version (src/store/credentials/credential-versions.ts) being read by the per-key budget
// script BEFORE the row is read from PostgreSQL, and replaced by every credential change after it commits and before it is
// acknowledged (src/store/credentials/announcing-store.ts). A change committed but never announced (a crash between the
// two, a write behind the service's back) is seen within the max age. Guarded by:
// test/unit/http/auth/versioned-credentials.test.ts and test/e2e/cached-credentials.instances.test.ts.
// Figures: docs/operations.md#the-credential-lookup-on-postgresql--redis
import type { Credential } from '../../store/store.ts';

interface Entry {
  readonly credential: Credential;
  /** The account's credentials version read before the row was. */
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

  /** The credential read under this very version, no older than the max age; undefined when it must be read again. */
  get(keyId: string, version: string): Credential | undefined {
    const entry = this.#entries.get(keyId);
    if (entry === undefined) return undefined;
    if (entry.version !== version || this.#now() - entry.readAt >= this.#maxAgeMs) {
      this.#entries.delete(keyId);
      return undefined;
    }
    return entry.credential;
  }

  /**
   * `version`: read before `credential` was, never after (a version read later could already tag a change not yet read).
   * `askedAt`: when the read was sent, so that the max age bounds the row's age, not the time since it arrived.
   */
  set(keyId: string, version: string, credential: Credential, askedAt: number = this.#now()): void {
    if (this.#maxEntries === 0) return;
    if (this.#entries.size >= this.#maxEntries && !this.#entries.has(keyId)) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    // Deleted first so that the Map's order stays the order entries were read in: the oldest is dropped first.
    this.#entries.delete(keyId);
    this.#entries.set(keyId, { credential, version, readAt: askedAt });
  }

  forget(keyId: string): void {
    this.#entries.delete(keyId);
  }
}
