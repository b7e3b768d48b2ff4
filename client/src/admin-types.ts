// The admin API's payloads (/admin/v0), as its OpenAPI document describes them.

export interface AdminAccount {
  readonly user_id: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly created_at: string;
}

export interface NewAdminAccount {
  readonly username: string;
  /** Default: the username. */
  readonly name?: string;
  /** Default: UTC. */
  readonly timezone?: string;
  /** Default: false. */
  readonly premium?: boolean;
}

/** At least one of them. */
export interface AdminAccountChange {
  readonly premium?: boolean;
  readonly name?: string;
  readonly timezone?: string;
}

export interface AdminKey {
  readonly key_id: string;
  readonly username: string;
  readonly label: string | null;
  readonly prefix: string;
  readonly scope: 'read' | 'write';
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
  readonly rolled_into: string | null;
}

/** A key just issued: `key` is the whole key, shown this once. */
export interface AdminIssuedKey extends AdminKey {
  readonly key: string;
}

export interface NewAdminKey {
  readonly label?: string;
  /** Default: write. */
  readonly scope?: 'read' | 'write';
  /** ISO 8601 with its zone, within 10 years. Default: never expires. */
  readonly expires_at?: string;
}

/** One UTC day of a key's requests, by outcome. */
export interface AdminKeyUsageDay {
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  /** 2xx and 3xx. */
  readonly success: number;
  /** 4xx other than 401, 403 and 429. */
  readonly client_error: number;
  /** 429. */
  readonly rate_limited: number;
  /** 401 and 403 (revoked or expired key, not Premium, read-only scope). */
  readonly refused: number;
  /** 5xx. */
  readonly server_error: number;
}

/** A key's last 30 days (days without a request left out, oldest first) and its last 5 addresses (newest first). */
export interface AdminKeyUsage {
  readonly days: readonly AdminKeyUsageDay[];
  readonly addresses: readonly { readonly address: string; readonly last_seen: string }[];
}

export interface AdminRolledKey {
  readonly old: AdminKey;
  readonly successor: AdminKey;
  /** The successor's whole key, shown this once. */
  readonly key: string;
}

export interface AdminDeletedAccount {
  readonly username: string;
  readonly deleted: true;
}

export interface AdminAuditEntry {
  readonly id: number;
  readonly occurred_at: string;
  /** key:<key id>, admin:<admin token id> or cli:<operating-system user> */
  readonly actor: string;
  readonly action: string;
  readonly user_id: number | null;
  readonly username: string | null;
  readonly changes: Readonly<Record<string, { readonly old: unknown; readonly new: unknown }>>;
  readonly request_id: string | null;
  readonly address: string | null;
}

export interface PageRequest {
  /** 1 to 100; default 50. */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: string;
}

/** GET /accounts: a page of accounts, oldest first. */
export interface AccountPageRequest extends PageRequest {
  /** Only accounts whose username starts with this, ignoring case: 1 to 64 letters, digits, '.', '_' or '-' (each only itself). */
  readonly usernamePrefix?: string;
}

export interface AuditRequest extends PageRequest {
  readonly username?: string;
  /** Entries made by exactly this actor: `admin:<token id>`, `key:<key id>` or `cli:<user>`. */
  readonly actor?: string;
  /** Entries of exactly this action, such as `key.revoked` (an unknown one is 400 invalid_action). */
  readonly action?: string;
  /** Entries at or after this instant (ISO 8601). */
  readonly since?: string;
  /** Entries before this instant (ISO 8601). */
  readonly until?: string;
}

/** One page of a list; `nextCursor` is null on the last. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/** A webhook endpoint, as the admin API shows it: never its secret. */
export interface AdminWebhookEndpoint {
  readonly endpoint_id: string;
  readonly url: string;
  readonly description: string | null;
  /** null: every event type. */
  readonly events: readonly string[] | null;
  readonly created_at: string;
  readonly enabled: boolean;
  readonly disabled_at: string | null;
  readonly disabled_reason: string | null;
  readonly failing_since: string | null;
}

/** An endpoint just registered, with its signing secret, shown this once. */
export interface AdminNewWebhookEndpoint extends AdminWebhookEndpoint {
  readonly secret: string;
}

export interface NewAdminWebhookEndpoint {
  readonly url: string;
  /** Comma-separated event types; every type when absent. */
  readonly events?: string;
  readonly description?: string;
}

export interface AdminWebhookAttempt {
  readonly attempted_at: string;
  readonly event_id: string;
  /** null: no answer came (see error). */
  readonly status: number | null;
  readonly latency_ms: number;
  readonly response: string | null;
  readonly error: string | null;
}

/** A test event (ping) sent to one endpoint, and what its receiver answered. */
export interface AdminWebhookTest {
  readonly endpoint_id: string;
  readonly url: string;
  /** The ping's id (its webhook-id): not stored, so it cannot be redelivered. */
  readonly event_id: string;
  readonly sent_at: string;
  /** The receiver answered 2xx within 10 s, as a delivery must. */
  readonly delivered: boolean;
  /** null: no answer came (see error). */
  readonly status: number | null;
  readonly latency_ms: number;
  /** The first 256 bytes of the answer. */
  readonly response: string | null;
  /** A refused connection, no answer within 10 s, an address that is not public. */
  readonly error: string | null;
}

export interface AdminRedelivery {
  readonly event_id: string;
  readonly endpoints: readonly string[];
}
