// `account-api audit`: reads the audit trail of changes to accounts and keys, oldest first.
import { AUDIT_ACTIONS } from '../domain/audit-events.ts';
import { readAudit } from '../operations/audit.ts';
import { auditJson } from '../operations/representations.ts';
import type { AuditEvent } from '../store/store.ts';
import { printList } from './cli-context.ts';
import { databaseGroup } from './command-spec.ts';

export const AUDIT = databaseGroup({
  name: 'audit',
  summary: 'The audit trail: every change to an account or a key, who made it, from where, and what it changed.',
  commands: [
    {
      words: ['audit'],
      summary:
        'Lists audit entries, oldest first (the newest 1000 that match): when, who (key:ID, admin:ID, cli:USER), the action, the account, ' +
        'the fields changed (old -> new), the request id and the address. Entries older than AUDIT_RETENTION_DAYS are pruned by serve.',
      flags: {
        user: { type: 'string', value: 'NAME', help: "only this account's entries (ignoring case), also once it is deleted" },
        actor: { type: 'string', value: 'ACTOR', help: 'only the entries of exactly this actor, such as admin:3kTqv9ZbW2aX, key:3kTqv9ZbW2aX or cli:root' },
        action: { type: 'string', value: 'ACTION', help: `only the entries of exactly this action: ${AUDIT_ACTIONS.join(', ')}` },
        since: { type: 'string', value: 'ISO', help: 'only entries at or after this date or time, such as 2026-11-01 or 2026-11-01T08:00:00Z' },
      },
      examples: [
        'npx account-api audit --user alice --since 2026-11-01',
        'npx account-api audit --actor admin:3kTqv9ZbW2aX --action key.revoked',
        'npx account-api audit --json',
      ],
      run: async (context, { store }) => {
        const events = await readAudit(store, {
          username: context.flags.user,
          actor: context.flags.actor,
          action: context.flags.action,
          since: context.flags.since,
        });
        printList(context, events, {
          json: eventJson,
          empty: 'No audit entries match.',
          columns: ['WHEN', 'ACTOR', 'ACTION', 'USERNAME', 'CHANGES', 'REQUEST_ID', 'ADDRESS'],
          row: (e) => [e.occurredAt, e.actor, e.action, e.username ?? '-', describeChanges(e), e.requestId ?? '-', e.address ?? '-'],
        });
      },
    },
  ],
});

/** The admin API's entry, with the account's id under the name the CLI's --json has always used. */
function eventJson(event: AuditEvent) {
  const { id, occurred_at, actor, action, user_id, ...rest } = auditJson(event);
  return { id, occurred_at, actor, action, account_id: user_id, ...rest };
}

function describeChanges(event: AuditEvent): string {
  const parts = Object.entries(event.changes).map(([field, change]) => `${field}: ${JSON.stringify(change.old)} -> ${JSON.stringify(change.new)}`);
  return parts.length === 0 ? '-' : parts.join('; ');
}
