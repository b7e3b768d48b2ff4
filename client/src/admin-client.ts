// AdminClient: one typed method per operation of the admin API (/admin/v0, ADMIN_PORT), authenticated by an admin token.
import { AccountApiError } from './account-api-error.ts';
import { DEFAULT_USER_AGENT } from './client.ts';
import { exchange, failureOf, type Call, type TransportOptions } from './transport.ts';
import type {
  AdminNewWebhookEndpoint,
  AdminRedelivery,
  AdminWebhookAttempt,
  AdminWebhookEndpoint,
  AdminWebhookTest,
  NewAdminWebhookEndpoint,
  AdminAccount,
  AdminAccountChange,
  AdminAuditEntry,
  AdminDeletedAccount,
  AdminIssuedKey,
  AdminKey,
  AdminKeyUsage,
  AdminRolledKey,
  AuditRequest,
  NewAdminAccount,
  NewAdminKey,
  Page,
  PageRequest,
  AccountPageRequest,
} from './admin-types.ts';

export interface AdminClientOptions {
  /** Where the admin listener is, without `/admin/v0`, such as `http://127.0.0.1:8082`. */
  readonly baseUrl: string;
  /** An admin token (aapi_admin_...) from `account-api admin-tokens create`. */
  readonly token: string;
  /** Per attempt, body included. Default 10000. */
  readonly timeoutMs?: number;
  /**
   * Retries after the first attempt: for 429 and 503, for network failures and timeouts, and for 409 idempotency_key_in_use on
   * a write. Every write carries an Idempotency-Key, the same on each attempt, so a retry never does it twice. Default 2.
   */
  readonly retries?: number;
  readonly retryBaseDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  readonly fetch?: typeof globalThis.fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly userAgent?: string;
}

/** The last argument of every write: its Idempotency-Key, when the caller keeps its own (to retry the call itself later). */
export interface AdminWriteOptions {
  /** 1 to 255 printable ASCII characters, new for each write meant; default: a random UUID per call. */
  readonly idempotencyKey?: string;
}

/** The server waits up to 10 s for a receiver: a test event's call is given longer than that, whatever timeoutMs says. */
const TEST_EVENT_TIMEOUT_MS = 15_000;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const segment = encodeURIComponent;

/** Only the parameters given, as strings: the admin API takes forms, where true is the text "true". */
function formOf(values: Readonly<Record<string, string | number | boolean | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])));
}

function queryOf(values: Readonly<Record<string, string | number | undefined>>): string {
  const query = new URLSearchParams(formOf(values)).toString();
  return query === '' ? '' : `?${query}`;
}

export class AdminClient {
  readonly baseUrl: string;
  readonly #transport: TransportOptions;

  constructor(options: AdminClientOptions) {
    if (!/^aapi_admin_/.test(options.token)) {
      // Refused before anything is sent: an API key must not travel to the admin port, nor a typo be sent at all.
      throw new AccountApiError({ status: 0, code: 'wrong_credential_kind', message: 'AdminClient takes an admin token (aapi_admin_...), not an API key.' });
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const positive = (name: string, value: number | undefined, fallback: number, min: number) => {
      if (value === undefined) return fallback;
      if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}; got ${value}.`);
      return value;
    };
    this.#transport = {
      apiUrl: `${this.baseUrl}/admin/v0`,
      headers: { accept: 'application/json', 'user-agent': options.userAgent ?? DEFAULT_USER_AGENT, authorization: `Bearer ${options.token}` },
      timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000, 1),
      retry: {
        retries: positive('retries', options.retries, 2, 0),
        baseDelayMs: positive('retryBaseDelayMs', options.retryBaseDelayMs, 500, 0),
        maxDelayMs: positive('maxRetryDelayMs', options.maxRetryDelayMs, 30_000, 0),
      },
      fetch: options.fetch ?? globalThis.fetch,
      sleep: options.sleep ?? wait,
    };
  }

  /** POST /accounts: 201 with the account; 409 username_taken, 400 invalid_username / invalid_name / invalid_timezone. */
  async createAccount(account: NewAdminAccount, options: AdminWriteOptions = {}): Promise<AdminAccount> {
    return (await this.#write<AdminAccount>({ method: 'POST', path: '/accounts', form: formOf({ ...account }) }, options)).data;
  }

  /** GET /accounts: one page, oldest first; `usernamePrefix` keeps those whose username starts with it (ignoring case). */
  async listAccounts(request: AccountPageRequest = {}): Promise<Page<AdminAccount>> {
    const { usernamePrefix, limit, cursor } = request;
    return this.#page<AdminAccount>(`/accounts${queryOf({ username_prefix: usernamePrefix, limit, cursor })}`);
  }

  /** GET /accounts/{username}: 404 account_not_found when there is none. */
  async getAccount(username: string): Promise<AdminAccount> {
    return (await this.#success<AdminAccount>({ method: 'GET', path: `/accounts/${segment(username)}` })).data;
  }

  /** PATCH /accounts/{username}: premium, name and/or timezone. */
  async updateAccount(username: string, change: AdminAccountChange, options: AdminWriteOptions = {}): Promise<AdminAccount> {
    return (await this.#write<AdminAccount>({ method: 'PATCH', path: `/accounts/${segment(username)}`, form: formOf({ ...change }) }, options)).data;
  }

  /** DELETE /accounts/{username}: the account and all of its keys. */
  async deleteAccount(username: string, options: AdminWriteOptions = {}): Promise<AdminDeletedAccount> {
    return (await this.#write<AdminDeletedAccount>({ method: 'DELETE', path: `/accounts/${segment(username)}` }, options)).data;
  }

  /** POST /accounts/{username}/keys: the key itself is in the answer, this once. */
  async createKey(username: string, key: NewAdminKey = {}, options: AdminWriteOptions = {}): Promise<AdminIssuedKey> {
    return (await this.#write<AdminIssuedKey>({ method: 'POST', path: `/accounts/${segment(username)}/keys`, form: formOf({ ...key }) }, options)).data;
  }

  /** GET /accounts/{username}/keys: every key, never a secret. */
  async listKeys(username: string): Promise<AdminKey[]> {
    return (await this.#success<AdminKey[]>({ method: 'GET', path: `/accounts/${segment(username)}/keys` })).data;
  }

  /** GET /accounts/{username}/keys/{key_id}/usage: requests per UTC day by outcome over the last 30 days, and the last addresses. */
  async readKeyUsage(username: string, keyId: string): Promise<AdminKeyUsage> {
    return (await this.#success<AdminKeyUsage>({ method: 'GET', path: `/accounts/${segment(username)}/keys/${segment(keyId)}/usage` })).data;
  }

  /** POST /keys/{key_id}/roll: the old key keeps working for `overlap` (default 24h; '0' stops it at once). */
  async rollKey(keyId: string, options: { readonly overlap?: string } & AdminWriteOptions = {}): Promise<AdminRolledKey> {
    return (await this.#write<AdminRolledKey>({ method: 'POST', path: `/keys/${segment(keyId)}/roll`, form: formOf({ overlap: options.overlap }) }, options)).data;
  }

  /** DELETE /keys/{key_id}: revokes it; servers refuse it from the next request. */
  async revokeKey(keyId: string, options: AdminWriteOptions = {}): Promise<AdminKey> {
    return (await this.#write<AdminKey>({ method: 'DELETE', path: `/keys/${segment(keyId)}` }, options)).data;
  }

  /** GET /audit: one page of the trail, newest first. */
  async readAudit(request: AuditRequest = {}): Promise<Page<AdminAuditEntry>> {
    const { username, actor, action, since, until, limit, cursor } = request;
    return this.#page<AdminAuditEntry>(`/audit${queryOf({ username, actor, action, since, until, limit, cursor })}`);
  }

  async addWebhookEndpoint(endpoint: NewAdminWebhookEndpoint, options: AdminWriteOptions = {}): Promise<AdminNewWebhookEndpoint> {
    return (await this.#write<AdminNewWebhookEndpoint>({ method: 'POST', path: '/webhooks', form: formOf({ ...endpoint }) }, options)).data;
  }

  /** GET /webhooks: one page, oldest first. */
  async listWebhookEndpoints(request: PageRequest = {}): Promise<Page<AdminWebhookEndpoint>> {
    return this.#page<AdminWebhookEndpoint>(`/webhooks${queryOf({ limit: request.limit, cursor: request.cursor })}`);
  }

  /** GET /webhooks/{endpoint_id}: one endpoint and its state, never its secret; 404 webhook_endpoint_not_found when there is none. */
  async getWebhookEndpoint(endpointId: string): Promise<AdminWebhookEndpoint> {
    return (await this.#success<AdminWebhookEndpoint>({ method: 'GET', path: `/webhooks/${segment(endpointId)}` })).data;
  }

  async removeWebhookEndpoint(endpointId: string, options: AdminWriteOptions = {}): Promise<AdminWebhookEndpoint> {
    return (await this.#write<AdminWebhookEndpoint>({ method: 'DELETE', path: `/webhooks/${segment(endpointId)}` }, options)).data;
  }

  async disableWebhookEndpoint(endpointId: string, options: AdminWriteOptions = {}): Promise<AdminWebhookEndpoint> {
    return (await this.#write<AdminWebhookEndpoint>({ method: 'POST', path: `/webhooks/${segment(endpointId)}/disable`, form: {} }, options)).data;
  }

  async enableWebhookEndpoint(endpointId: string, options: AdminWriteOptions = {}): Promise<AdminWebhookEndpoint> {
    return (await this.#write<AdminWebhookEndpoint>({ method: 'POST', path: `/webhooks/${segment(endpointId)}/enable`, form: {} }, options)).data;
  }

  async listWebhookDeliveries(endpointId: string, options: { readonly limit?: number } = {}): Promise<AdminWebhookAttempt[]> {
    return (await this.#success<AdminWebhookAttempt[]>({ method: 'GET', path: `/webhooks/${segment(endpointId)}/deliveries${queryOf({ limit: options.limit })}` })).data;
  }

  /**
   * POST /webhooks/{endpoint_id}/test: a signed ping sent to the endpoint now; what its receiver answered (`delivered`: a 2xx),
   * also when it answered 500 or nothing. 404 webhook_endpoint_not_found when there is none.
   */
  async testWebhookEndpoint(endpointId: string, options: AdminWriteOptions = {}): Promise<AdminWebhookTest> {
    const call: Call = { method: 'POST', path: `/webhooks/${segment(endpointId)}/test`, form: {} };
    return (await this.#write<AdminWebhookTest>(call, options, TEST_EVENT_TIMEOUT_MS)).data;
  }

  async redeliverWebhookEvent(eventId: string, options: { readonly endpointId?: string } & AdminWriteOptions = {}): Promise<AdminRedelivery> {
    const form = formOf({ endpoint_id: options.endpointId });
    return (await this.#write<AdminRedelivery>({ method: 'POST', path: `/webhook-events/${segment(eventId)}/redeliver`, form }, options)).data;
  }

  async #page<T>(path: string): Promise<Page<T>> {
    const envelope = await this.#success<T[], { next_cursor: string | null }>({ method: 'GET', path });
    return { items: envelope.data, nextCursor: envelope.meta.next_cursor ?? null };
  }

  /**
   * A write, with one Idempotency-Key for the whole call: every attempt the transport makes sends the same one, so an attempt
   * whose answer was lost is retried safely (the server answers the first attempt's answer again, and does nothing twice).
   */
  async #write<Data>(call: Call, options: AdminWriteOptions, minTimeoutMs = 0): Promise<{ data: Data; meta: Record<string, never> }> {
    return this.#success<Data>({ ...call, headers: { ...call.headers, 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() } }, minTimeoutMs);
  }

  async #success<Data, Meta = Record<string, never>>(call: Call, minTimeoutMs = 0): Promise<{ data: Data; meta: Meta }> {
    const transport = minTimeoutMs > this.#transport.timeoutMs ? { ...this.#transport, timeoutMs: minTimeoutMs } : this.#transport;
    const answer = await exchange(transport, call);
    const body = answer.body as { status?: string; data?: Data; meta?: Meta } | undefined;
    if (answer.status >= 200 && answer.status < 300 && body?.status === 'success' && body.data !== undefined) {
      return { data: body.data, meta: (body.meta ?? {}) as Meta };
    }
    throw failureOf(answer, `${call.method} ${call.path}`);
  }
}
