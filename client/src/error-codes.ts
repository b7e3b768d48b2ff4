// The failure codes a client can meet: every code of docs/api.md's "Every code" table, plus the ones this client raises itself.

/** Every `code` the server documents (docs/api.md, "Every code"). Within v0 codes are only ever added. */
export type ServerErrorCode =
  // 400
  | 'missing_parameter'
  | 'unknown_parameter'
  | 'duplicate_parameter'
  | 'invalid_parameter'
  | 'too_many_parameters'
  | 'parameter_too_long'
  | 'malformed_body'
  | 'malformed_url'
  | 'invalid_name'
  | 'invalid_timezone'
  | 'malformed_request'
  | 'duplicate_header'
  | 'bad_request'
  | 'invalid_idempotency_key'
  // 401
  | 'credentials_required'
  | 'malformed_credentials'
  | 'malformed_key'
  | 'invalid_credentials'
  | 'key_revoked'
  | 'key_expired'
  | 'wrong_environment'
  | 'wrong_credential_kind'
  | 'metrics_token_required'
  // 403
  | 'premium_required'
  | 'insufficient_scope'
  // 404
  | 'not_found'
  | 'account_not_found'
  // 405
  | 'method_not_allowed'
  // 408
  | 'request_timeout'
  // 409
  | 'idempotency_key_in_use'
  // 412
  | 'precondition_failed'
  // 413
  | 'body_too_large'
  // 415
  | 'unsupported_media_type'
  // 417
  | 'expectation_failed'
  // 422
  | 'idempotency_key_reused'
  // 429
  | 'rate_limited'
  | 'too_many_failed_attempts'
  // 431
  | 'headers_too_large'
  // 500
  | 'internal_error'
  // 501
  | 'unsupported_transfer_coding'
  // 503
  | 'store_unavailable'
  | 'store_busy'
  | 'rate_limiter_unavailable'
  | 'not_ready'
  | 'overloaded'
  | 'shutting_down';

/**
 * Codes this client raises without an answer from the server (status 0), or for an answer that is not the envelope.
 * `wrong_environment` (a sandbox key in live mode or the reverse) is also raised before sending, with the server's code.
 */
export type ClientErrorCode = 'network_error' | 'timeout' | 'invalid_response';

/**
 * What `AccountApiError.code` holds. The literals give completion and checked `switch` cases; `string & {}` keeps the type
 * open, so a code a newer server adds is still a valid value and compiling against this client never breaks because of it.
 */
export type ErrorCode = ServerErrorCode | ClientErrorCode | (string & {});
