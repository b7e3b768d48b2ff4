// AccountApiClient: one typed method per endpoint of /api/v0, over the platform's fetch.
import { AccountApiError } from './account-api-error.ts';
import { basicAuthorization, environmentOfKey } from './credentials.ts';
import { exchange, failureOf, type Answer, type Call, type TransportOptions } from './transport.ts';
import type {
  EmptyMeta,
  Endpoint,
  EndpointBody,
  Endpoints,
  Hello,
  Settings,
  SuccessEnvelope,
  TimezoneList,
  TimezonesMeta,
  UpdateSettings,
  UpdateUser,
  User,
  WithEtag,
  WriteOptions,
} from './types.ts';

export const LIVE_BASE_URL = 'http://localhost:8080';
export const SANDBOX_BASE_URL = 'http://localhost:8081';
export const DEFAULT_USER_AGENT = 'account-api-client/0.1.0';

export interface AccountApiClientOptions {
  /** Where the server is, without `/api/v0`. Default: `http://localhost:8080`, or `http://localhost:8081` with `sandbox`. */
  readonly baseUrl?: string;
  /** Talk to the sandbox: its default base URL, and only `aapi_sandbox_` keys. Default false (live: only `aapi_live_` keys). */
  readonly sandbox?: boolean;
  /** The account's username; give it together with `apiKey`, or neither (then only `/hello` answers). */
  readonly username?: string;
  readonly apiKey?: string;
  /** Per attempt, body included. Default 10000. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, for 429 and 503 (any method) and network failures or timeouts (GET only). Default 2. */
  readonly retries?: number;
  /** First backoff step in ms; it doubles per retry, with jitter. Default 500. */
  readonly retryBaseDelayMs?: number;
  /** The longest wait before a retry, whatever Retry-After asks. Default 30000. */
  readonly maxRetryDelayMs?: number;
  /** Default: the platform's `fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /** How to wait before a retry. Default: a timer. Tests pass one that records the delay and resolves at once. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Sent as User-Agent where the platform allows (browsers do not). Default `account-api-client/0.1.0`. */
  readonly userAgent?: string;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function integerOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}; got ${value}.`);
  return value;
}

export class AccountApiClient {
  readonly baseUrl: string;
  readonly sandbox: boolean;
  readonly #transport: TransportOptions;
  /** The last timezone list and its ETag, so an unchanged list costs a bodiless 304. Per instance, never shared. */
  #timezones: { readonly etag: string; readonly list: TimezoneList } | undefined;

  constructor(options: AccountApiClientOptions = {}) {
    this.sandbox = options.sandbox ?? false;
    this.baseUrl = (options.baseUrl ?? (this.sandbox ? SANDBOX_BASE_URL : LIVE_BASE_URL)).replace(/\/+$/, '');
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': options.userAgent ?? DEFAULT_USER_AGENT };

    const { username, apiKey } = options;
    if ((username === undefined) !== (apiKey === undefined)) {
      throw new TypeError('Give both username and apiKey, or neither.');
    }
    if (username !== undefined && apiKey !== undefined) {
      if (username.includes(':')) throw new TypeError('A username cannot contain ":" (HTTP Basic could not send it).');
      // Refused here, before anything is sent, so a key never reaches the wrong environment's server (or its logs).
      const environment = environmentOfKey(apiKey);
      const wanted = this.sandbox ? 'sandbox' : 'live';
      if (environment !== undefined && environment !== wanted) {
        throw new AccountApiError({
          status: 0,
          code: 'wrong_environment',
          message: this.sandbox
            ? 'This is a live key (aapi_live_), but the client is in sandbox mode; use a sandbox key, or drop sandbox: true.'
            : 'This is a sandbox key (aapi_sandbox_), but the client is in live mode; use a live key, or set sandbox: true.',
        });
      }
      headers.authorization = basicAuthorization(username, apiKey);
    }

    this.#transport = {
      apiUrl: `${this.baseUrl}/api/v0`,
      headers,
      timeoutMs: integerOption('timeoutMs', options.timeoutMs, 10_000, 1),
      retry: {
        retries: integerOption('retries', options.retries, 2, 0),
        baseDelayMs: integerOption('retryBaseDelayMs', options.retryBaseDelayMs, 500, 0),
        maxDelayMs: integerOption('maxRetryDelayMs', options.maxRetryDelayMs, 30_000, 0),
      },
      fetch: options.fetch ?? globalThis.fetch,
      sleep: options.sleep ?? wait,
    };
  }

  /** GET /hello: `World` without credentials, the account's display name with them. Needs no Premium. */
  async hello(): Promise<Hello> {
    return (await this.#success<Hello>({ method: 'GET', path: '/hello' })).data;
  }

  /** POST /hello: echoes `name` exactly as sent. Needs no Premium. */
  async sayHello(name: string): Promise<Hello> {
    return (await this.#success<Hello>({ method: 'POST', path: '/hello', form: { name } })).data;
  }

  /** GET /user: the calling account. Premium. */
  async getUser(): Promise<User> {
    return (await this.#success<User>({ method: 'GET', path: '/user' })).data;
  }

  /** GET /user with its ETag, for a later `updateUser(..., { ifMatch })` or `updateSettings(..., { ifMatch })`. Premium. */
  async getUserWithEtag(): Promise<WithEtag<User>> {
    return this.#tagged<User>({ method: 'GET', path: '/user' });
  }

  /**
   * POST /user: changes the display name (1 to 100 characters, no control characters); answers the updated account. Premium.
   * `ifMatch` writes only over that version of the account (else 412 `precondition_failed`); `idempotencyKey` makes the
   * write safe to repeat.
   */
  async updateUser(update: UpdateUser, options: WriteOptions = {}): Promise<User> {
    return (await this.#success<User>({ method: 'POST', path: '/user', form: { name: update.name }, headers: writeHeaders(options) })).data;
  }

  /** GET /settings. Premium. */
  async getSettings(): Promise<Settings> {
    return (await this.#success<Settings>({ method: 'GET', path: '/settings' })).data;
  }

  /** GET /settings with its ETag, for a later `updateSettings(..., { ifMatch })`. Premium. */
  async getSettingsWithEtag(): Promise<WithEtag<Settings>> {
    return this.#tagged<Settings>({ method: 'GET', path: '/settings' });
  }

  /**
   * POST /settings: `timezone` must be exactly a name from `listTimezones()`, else 400 `invalid_timezone`. Premium.
   * `ifMatch` and `idempotencyKey` as for `updateUser`.
   */
  async updateSettings(update: UpdateSettings, options: WriteOptions = {}): Promise<Settings> {
    const call: Call = { method: 'POST', path: '/settings', form: { timezone: update.timezone }, headers: writeHeaders(options) };
    return (await this.#success<Settings>(call)).data;
  }

  /**
   * GET /settings/timezones. The list is kept with its ETag; later calls send If-None-Match, and a 304 returns the kept
   * list without a body crossing the network. Each call returns a fresh copy, so changing it cannot corrupt the cache.
   */
  async listTimezones(): Promise<TimezoneList> {
    const cached = this.#timezones;
    const answer = await exchange(this.#transport, {
      method: 'GET',
      path: '/settings/timezones',
      ...(cached === undefined ? {} : { headers: { 'if-none-match': cached.etag } }),
    });
    if (answer.status === 304 && cached !== undefined) return copy(cached.list);
    const envelope = successOf<string[], TimezonesMeta>(answer, 'GET /settings/timezones');
    const list: TimezoneList = { timezones: envelope.data, description: envelope.meta.description };
    const etag = answer.headers.get('etag');
    this.#timezones = etag === null ? undefined : { etag, list: copy(list) };
    return list;
  }

  /**
   * The whole success envelope `{status, messages, meta, data}` of one call, as the server sent it, for tools that show or
   * pass it on (the account-api CLI's `--json`): `envelope('GET /user')`, `envelope('POST /settings', { timezone })`. Same
   * retries, timeout and AccountApiError as the typed methods; it keeps no ETag cache, so the timezone list always has a body.
   */
  async envelope<E extends Endpoint>(endpoint: E, ...body: EndpointBody<E>): Promise<SuccessEnvelope<Endpoints[E]['data'], Endpoints[E]['meta']>> {
    const space = endpoint.indexOf(' ');
    const method = endpoint.slice(0, space) as Call['method'];
    const path = endpoint.slice(space + 1);
    const form = body[0] as Readonly<Record<string, string>> | undefined;
    return this.#success<Endpoints[E]['data'], Endpoints[E]['meta']>(form === undefined ? { method, path } : { method, path, form: { ...form } });
  }

  async #success<Data, Meta = EmptyMeta>(call: Call): Promise<SuccessEnvelope<Data, Meta>> {
    return successOf<Data, Meta>(await exchange(this.#transport, call), `${call.method} ${call.path}`);
  }

  async #tagged<Data>(call: Call): Promise<WithEtag<Data>> {
    const answer = await exchange(this.#transport, call);
    const what = `${call.method} ${call.path}`;
    const { data } = successOf<Data, EmptyMeta>(answer, what);
    const etag = answer.headers.get('etag');
    if (etag === null) throw new AccountApiError({ status: answer.status, code: 'invalid_response', message: `${what} answered without an ETag.` });
    return { data, etag };
  }
}

function writeHeaders(options: WriteOptions): Record<string, string> {
  return {
    ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
    ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }),
  };
}

function successOf<Data, Meta>(answer: Answer, what: string): SuccessEnvelope<Data, Meta> {
  const body = answer.body as Partial<SuccessEnvelope<Data, Meta>> | undefined;
  if (answer.status >= 200 && answer.status < 300 && body?.status === 'success' && body.data !== undefined) {
    return body as SuccessEnvelope<Data, Meta>;
  }
  throw failureOf(answer, what);
}

function copy(list: TimezoneList): TimezoneList {
  return { timezones: [...list.timezones], description: list.description };
}
