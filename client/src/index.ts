// @account-api/client: the typed clients of account-api's /api/v0 (AccountApiClient) and /admin/v0 (AdminClient).
export { AccountApiClient, DEFAULT_USER_AGENT, LIVE_BASE_URL, SANDBOX_BASE_URL, type AccountApiClientOptions } from './client.ts';
export { AdminClient, type AdminClientOptions, type AdminWriteOptions } from './admin-client.ts';
export type {
  AccountPageRequest,
  AdminAccount,
  AdminAccountChange,
  AdminAuditEntry,
  AdminDeletedAccount,
  AdminIssuedKey,
  AdminKey,
  AdminNewWebhookEndpoint,
  AdminRedelivery,
  AdminWebhookAttempt,
  AdminWebhookEndpoint,
  AdminWebhookTest,
  NewAdminWebhookEndpoint,
  AdminRolledKey,
  AdminKeyUsage,
  AdminKeyUsageDay,
  AuditRequest,
  NewAdminAccount,
  NewAdminKey,
  Page,
  PageRequest,
} from './admin-types.ts';
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
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookAccount,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookFieldChange,
  type WebhookKey,
} from './webhooks.ts';
