// An account and an API key's record as every layer sees them: the store keeps them, operations change them, events and the
// admin API show them. Plain data, no rules.

export interface Account {
  readonly id: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly createdAt: string;
}

/** `write` allows every endpoint; `read` only reads (GET) and the public ones. */
export type KeyScope = 'read' | 'write';

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly username: string;
  readonly label: string | null;
  readonly displayPrefix: string;
  readonly scope: KeyScope;
  readonly createdAt: string;
  /** null: the key never expires. */
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
  /** The id of the key this one was rolled into, if it was. */
  readonly rolledInto: string | null;
}
