// What the store keeps for Idempotency-Key: one owner's key claimed under a lease, the answer kept with it; no SQL here.

/** Replayed byte for byte. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/** A table per kind of owner, so a key of one kind can never answer a request of the other. */
export type IdempotencyOwner = { readonly accountId: number; readonly adminTokenId?: never } | { readonly adminTokenId: string; readonly accountId?: never };

/** The token stops a holder whose lease ran out from finishing. */
export type HeldIdempotencyKey = IdempotencyOwner & {
  readonly key: string;
  readonly token: string;
};

export type IdempotencyKeyClaim = HeldIdempotencyKey & {
  /** The same key with another fingerprint is another request. */
  readonly fingerprint: string;
  /** Past it another request may take the key over (its holder crashed). */
  readonly leaseMs: number;
  /** Answered or not; past it the key is free and pruning deletes it. */
  readonly ttlMs: number;
};

export type IdempotencyClaimOutcome =
  | { readonly state: 'claimed' }
  | { readonly state: 'in_progress'; readonly fingerprint: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly answer: StoredAnswer };

export interface IdempotencyStore {
  /** Atomic: of two claims at once, exactly one gets 'claimed'. Past lease or time to live, claimed afresh. */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome>;
  /** False when no longer held with this token. */
  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean>;
  /** The request failed in a way worth retrying. */
  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void>;
  /** Resolves with how many. */
  pruneIdempotencyKeys(): Promise<number>;
}
