// Every failure `code` the API answers with, by HTTP status: the table docs/api.md shows and the OpenAPI document enumerates.

export const FAILURE_CODES = {
  400: [
    'missing_parameter',
    'unknown_parameter',
    'duplicate_parameter',
    'invalid_parameter',
    'too_many_parameters',
    'parameter_too_long',
    'malformed_body',
    'malformed_url',
    'invalid_name',
    'invalid_timezone',
    'malformed_request',
    'duplicate_header',
    'bad_request',
    'invalid_idempotency_key',
  ],
  401: ['credentials_required', 'malformed_credentials', 'malformed_key', 'invalid_credentials', 'key_revoked', 'key_expired', 'wrong_environment', 'wrong_credential_kind', 'metrics_token_required'],
  403: ['premium_required', 'insufficient_scope'],
  404: ['not_found', 'account_not_found'],
  405: ['method_not_allowed'],
  408: ['request_timeout'],
  409: ['idempotency_key_in_use'],
  413: ['body_too_large'],
  412: ['precondition_failed'],
  415: ['unsupported_media_type'],
  417: ['expectation_failed'],
  422: ['idempotency_key_reused'],
  429: ['rate_limited', 'too_many_failed_attempts'],
  431: ['headers_too_large'],
  500: ['internal_error'],
  501: ['unsupported_transfer_coding'],
  503: ['store_unavailable', 'store_busy', 'rate_limiter_unavailable', 'not_ready', 'overloaded', 'shutting_down'],
} as const satisfies Record<number, readonly string[]>;

export type FailureStatus = keyof typeof FAILURE_CODES;

/** What any operation on either port can answer, whatever it does: a malformed request, a limit, a failing server. */
const ALWAYS_POSSIBLE_STATUSES = [400, 401, 405, 408, 417, 429, 431, 500, 501, 503] as const;

/**
 * The statuses an operation can answer: those any operation can, and each of `depending` whose condition holds. In no
 * particular order: a table keyed by status lists them in ascending order.
 */
export function possibleStatuses<S extends number>(depending: Readonly<Partial<Record<S, boolean | undefined>>>): S[] {
  const more = Object.entries(depending).filter(([, holds]) => holds === true);
  return [...ALWAYS_POSSIBLE_STATUSES, ...more.map(([status]) => Number(status))] as S[];
}

/** The entries of `table` for these statuses: how the admin port takes over the public port's codes and descriptions. */
export function forStatuses<T extends Readonly<Record<number, unknown>>, const S extends keyof T & number>(table: T, statuses: readonly S[]): Pick<T, S> {
  return Object.fromEntries(statuses.map((status) => [status, table[status]])) as Pick<T, S>;
}

export const FAILURE_DESCRIPTIONS: Readonly<Record<FailureStatus, string>> = {
  400: 'A parameter is missing, unknown, repeated, too long or invalid; the body, URL or request is malformed; Authorization is sent twice; or Idempotency-Key is not 1 to 255 printable ASCII characters.',
  401: 'Credentials are missing, malformed, wrong, revoked or expired, belong to the other environment, or are an admin token.',
  403: "The account does not have Premium, or the key's scope (read) does not allow the call (it needs write).",
  404: 'Nothing is at this path (also: an unknown API version), or the account was deleted while its own request ran.',
  405: 'The path exists but not with this method; see the Allow header.',
  408: 'The request did not arrive in time.',
  409: 'Another request with this Idempotency-Key is still running; retry once it is answered.',
  413: 'The body is larger than the server accepts.',
  412: 'If-Match names no current version of the account: it changed since the client read it; nothing was written.',
  415: 'The body is neither a form nor JSON.',
  417: "An Expect header other than '100-continue'.",
  422: 'This Idempotency-Key was used in the last 24 hours for a different request (body, path or If-Match).',
  429: 'A rate limit is spent; retry after Retry-After seconds.',
  431: 'The request headers are too large.',
  500: 'The server failed; nothing internal is shown.',
  501: 'A Transfer-Encoding other than chunked.',
  503: 'An engine is unavailable, the server is overloaded or shutting down; retry after Retry-After seconds.',
};
