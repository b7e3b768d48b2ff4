// What the store keeps for Idempotency-Key: one owner's key claimed under a lease, the answer kept with it; no SQL here.

/** An answer kept for an idempotency key, replayed byte for byte: its status, the headers replayed with it, and its body. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/**
 * Whose idempotency key it is: an account's (the public port) or an admin token's (the admin port). Each kind is kept in a
 * table of its own, so a key of one kind can never answer a request of the other.
 */
export type IdempotencyOwner = { readonly accountId: number; readonly adminTokenId?: never } | { readonly adminTokenId: string; readonly accountId?: never };

/** One owner's idempotency key, and the token its holder got when claiming it (so a holder whose lease ran out cannot finish). */
export type HeldIdempotencyKey = IdempotencyOwner & {
  readonly key: string;
  readonly token: string;
};

export type IdempotencyKeyClaim = HeldIdempotencyKey & {
  /** Names the request (method, path, body...): the same key with another fingerprint is another request. */
  readonly fingerprint: string;
  /** How long the claim holds while the request runs; past it another request may take the key over (its holder crashed). */
  readonly leaseMs: number;
  /** How long the key is kept from now, answered or not; past it the key is free again and pruning deletes it. */
  readonly ttlMs: number;
};

/** What claiming found: the key is now the caller's, or another request holds it, or it was answered already. */
export type IdempotencyClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'in_progress'; readonly fingerprint: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly answer: StoredAnswer };

/** Idempotency keys: claimed, completed, released and pruned, on both ports (idempotency/sqlite.ts, idempotency/postgres.ts). */
export interface IdempotencyStore {
  /**
   * Claims an account's or admin token's idempotency key atomically: of two claims at once, exactly one gets 'claimed'. A key held past its
   * lease, or kept past its time to live, is claimed afresh.
   */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome>;
  /** Records the answer for a held key (one that changed nothing); false when the key is no longer held with this token. */
  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean>;
  /** Gives a held key up (the request failed in a way worth retrying); nothing when it is no longer held with this token. */
  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void>;
  /** Deletes keys (of every owner) kept past their time to live; resolves with how many. */
  pruneIdempotencyKeys(): Promise<number>;
}
