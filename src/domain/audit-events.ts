// What an audited change is, in words every face and both stores share: the actions, and the entry before it is stored.
import { DomainError } from './errors.ts';

export const AUDIT_ACTIONS = [
  'account.created',
  'account.updated',
  'account.premium_changed',
  'account.deleted',
  'key.created',
  'key.rolled',
  'key.revoked',
  'admin_token.created',
  'admin_token.revoked',
  // A test event sent to an endpoint: it changes nothing, but it makes the server send a request on demand (docs/api.md).
  'webhook_endpoint.tested',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Longer than any actor the trail records (`key:<key id>`, `admin:<token id>`, `cli:<user>`): a longer filter is a mistake. */
export const AUDIT_ACTOR_MAX_LENGTH = 128;

/** One of AUDIT_ACTIONS, exactly: a filter naming any other could only ever match nothing, so it is refused, naming them all. */
export function checkAuditAction(action: string, field = 'action'): AuditAction {
  if ((AUDIT_ACTIONS as readonly string[]).includes(action)) return action as AuditAction;
  throw new DomainError('invalid', 'invalid_action', `'${action}' is not an audit action; the actions are ${AUDIT_ACTIONS.join(', ')}.`, {
    field,
  });
}

/** Compared exactly (case and all). Any text an actor can hold (a `cli:` one holds the operating-system user) but a control character. */
export function checkAuditActor(actor: string, field = 'actor'): string {
  if (actor.length === 0 || actor.length > AUDIT_ACTOR_MAX_LENGTH || /\p{Cc}/u.test(actor)) {
    throw new DomainError(
      'invalid',
      'invalid_actor',
      `An actor is 1 to ${AUDIT_ACTOR_MAX_LENGTH} characters without control characters, such as key:3kTqv9ZbW2aX, admin:3kTqv9ZbW2aX or cli:root.`,
      { field },
    );
  }
  return actor;
}

/** A field's value before and after a change; null where there was none (a creation, a deletion). */
export interface FieldChange {
  readonly old: string | number | boolean | null;
  readonly new: string | number | boolean | null;
}

export type AuditChanges = Readonly<Record<string, FieldChange>>;

/** One entry to record, beside the change it describes. Never a secret: key ids only, never a key or its hash. */
export interface NewAuditEvent {
  readonly action: AuditAction;
  readonly accountId: number | null;
  readonly username: string | null;
  readonly changes: AuditChanges;
}
