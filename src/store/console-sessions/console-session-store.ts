// The operator console's sessions as the store keeps them: made at sign-in, found (with their admin token's state) on each
// request, touched, ended at sign-out and pruned past their lifetimes; no SQL here.

/** A console session as the store keeps it: the hash of its cookie's secret, never the secret. */
export interface ConsoleSession {
  readonly tokenId: string;          // the admin token it was signed in with
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  /** The admin token has been revoked (or deleted) since: the session must be refused. */
  readonly tokenRevoked: boolean;
}

export interface NewConsoleSession {
  readonly hash: Uint8Array;         // 32 bytes, SHA-256 of the cookie's secret
  readonly tokenId: string;
  readonly createdAt: Date;
}

export interface ConsoleSessionStore {
  createConsoleSession(session: NewConsoleSession): Promise<void>;
  /** Joined with the admin token in one read; null when no such session. */
  findConsoleSession(hash: Uint8Array): Promise<ConsoleSession | null>;
  /** Records the session's last request; callers throttle it and need not await it (like touchAdminToken). */
  touchConsoleSession(hash: Uint8Array, seenAt: Date): Promise<void>;
  /** Sign out: the session is gone; ending one that is gone already is not an error. */
  endConsoleSession(hash: Uint8Array): Promise<void>;
  /** Deletes sessions created before `createdBefore` or last seen before `seenBefore`, in bounded batches (src/store/pruning.ts); resolves with how many. */
  pruneConsoleSessions(createdBefore: Date, seenBefore: Date): Promise<number>;
}
