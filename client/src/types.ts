// The shapes the API sends and takes: the envelope, its messages, and the payload of each endpoint.
import type { ErrorCode } from './error-codes.ts';

/** One entry of `messages`: switch on `code`; `message` is a sentence for people; `field` names the parameter at fault. */
export interface Message {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string;
}

/** `meta` of every answer but the timezone list. */
export type EmptyMeta = Record<string, never>;

export interface SuccessEnvelope<Data, Meta = EmptyMeta> {
  readonly status: 'success';
  readonly messages: readonly [];
  readonly meta: Meta;
  readonly data: Data;
}

/** `fail`: the request must change (4xx); `error`: the server's side (5xx), retrying may help. */
export interface FailureEnvelope {
  readonly status: 'fail' | 'error';
  readonly messages: readonly Message[];
  readonly meta: EmptyMeta;
  readonly data: null;
}

/** Every response of the API, success or failure, is one of these. */
export type Envelope<Data, Meta = EmptyMeta> = SuccessEnvelope<Data, Meta> | FailureEnvelope;

/** data of GET /hello and POST /hello. */
export interface Hello {
  name: string;
}

/** data of GET /user and POST /user. */
export interface User {
  user_id: number;
  username: string;
  name: string;
  timezone: string;
}

/** data of GET /settings and POST /settings. */
export interface Settings {
  timezone: string;
}

/** meta of GET /settings/timezones. */
export interface TimezonesMeta {
  description: string;
}

/** What `listTimezones()` returns: the list (`data`) and its description (`meta.description`). */
export interface TimezoneList {
  /** IANA names such as `Europe/Paris`, in code-point order, `UTC` last. */
  timezones: string[];
  description: string;
}

/** Body of POST /user. */
export interface UpdateUser {
  name: string;
}

/** Body of POST /settings. */
export interface UpdateSettings {
  /** Exactly a name from `listTimezones()` (case-sensitive). */
  timezone: string;
}

/** The data of a read, with the ETag naming this version of it: give it as `ifMatch` to write only over this version. */
export interface WithEtag<Data> {
  readonly data: Data;
  readonly etag: string;
}

/** Options of `updateUser` and `updateSettings`. */
export interface WriteOptions {
  /**
   * Sent as Idempotency-Key (1 to 255 printable ASCII characters; a new UUID per intended write): the same key with the same
   * write within 24 hours gets the first answer again and changes nothing twice. With one, the client also retries the write
   * after a network failure, a timeout, or a 409 `idempotency_key_in_use` (its first attempt still running).
   */
  readonly idempotencyKey?: string;
  /**
   * Sent as If-Match: an ETag from `getUserWithEtag()` or `getSettingsWithEtag()` (or `*`). When the account changed since,
   * the write is refused with 412 `precondition_failed` and nothing is written.
   */
  readonly ifMatch?: string;
}

/**
 * Every call of /api/v0 by method and path: the body it takes (`undefined`: none) and the `data` and `meta` of its success
 * envelope. `AccountApiClient.envelope()` is typed by it.
 */
export interface Endpoints {
  'GET /hello': { readonly body: undefined; readonly data: Hello; readonly meta: EmptyMeta };
  'POST /hello': { readonly body: Hello; readonly data: Hello; readonly meta: EmptyMeta };
  'GET /user': { readonly body: undefined; readonly data: User; readonly meta: EmptyMeta };
  'POST /user': { readonly body: UpdateUser; readonly data: User; readonly meta: EmptyMeta };
  'GET /settings': { readonly body: undefined; readonly data: Settings; readonly meta: EmptyMeta };
  'POST /settings': { readonly body: UpdateSettings; readonly data: Settings; readonly meta: EmptyMeta };
  'GET /settings/timezones': { readonly body: undefined; readonly data: string[]; readonly meta: TimezonesMeta };
}

/** `'GET /user'`, `'POST /settings'`, ...: a key of `Endpoints`. */
export type Endpoint = keyof Endpoints;

/** The rest arguments after the endpoint: none for a call without a body, else exactly its body. */
export type EndpointBody<E extends Endpoint> = Endpoints[E]['body'] extends undefined ? [] : [body: Endpoints[E]['body']];
