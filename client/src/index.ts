// @account-api/client: the typed client of account-api's /api/v0.
export { AccountApiClient, DEFAULT_USER_AGENT, LIVE_BASE_URL, SANDBOX_BASE_URL, type AccountApiClientOptions } from './client.ts';
export { AccountApiError, type AccountApiErrorInit } from './account-api-error.ts';
export type { ClientErrorCode, ErrorCode, ServerErrorCode } from './error-codes.ts';
export type {
  EmptyMeta,
  Endpoint,
  EndpointBody,
  Endpoints,
  Envelope,
  FailureEnvelope,
  Hello,
  Message,
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
