// GET /admin/v0/audit: the audit trail, newest first, filtered by account, actor, action and time, a page at a time.
import type { FastifyInstance } from 'fastify';
import { parseInstant } from '../../domain/instants.ts';
import { success } from '../../http/wire/envelope.ts';
import type { Store } from '../../store/store.ts';
import { adminRoute, pageQuery, stringParameter, USERNAME_SHAPE } from '../admin-schemas.ts';
import { decodeCursor, nextCursor, pageLimit } from '../../http/wire/paging.ts';
import { auditJson } from '../../operations/representations.ts';
import { auditFilters } from '../../operations/audit.ts';
import { AUDIT_ACTIONS, AUDIT_ACTOR_MAX_LENGTH } from '../../domain/audit-events.ts';

type AuditQuery = { username?: string; actor?: string; action?: string; since?: string; until?: string; limit?: string; cursor?: string };

export async function adminAuditRoutes(app: FastifyInstance, options: { readonly store: Store }) {
  const { store } = options;
  app.get<{ Querystring: AuditQuery }>('/audit', {
    ...adminRoute('Audit', {
      operationId: 'readAudit',
      summary: 'Read the audit trail',
      description:
        'Every change to an account, a key or an admin token, and every webhook test event sent, newest first: who (actor), what ' +
        '(action, changes), when, and from which ' +
        'request and address. actor and action match exactly (an action not in the list is 400 invalid_action); since is ' +
        'inclusive, until exclusive. Follow meta.next_cursor (null on the last page) with ?cursor=, ' +
        'keeping the same filters.',
      querystring: pageQuery('Entries', 'ZTQy', {
        username: stringParameter("Only this account's entries (also after it was deleted)", 'alice', USERNAME_SHAPE),
        actor: stringParameter('Only the entries of exactly this actor: admin:<token id>, key:<key id> or cli:<user>', 'admin:3kTqv9ZbW2aX', {
          maxLength: AUDIT_ACTOR_MAX_LENGTH,
        }),
        // An enum documented, not checked: the schema's refusal would be invalid_parameter, and the operation's names the actions.
        action: stringParameter(`Only the entries of exactly this action, one of ${AUDIT_ACTIONS.join(', ')}`, 'key.revoked', { enum: AUDIT_ACTIONS }),
        since: stringParameter('Entries at or after this instant (ISO 8601)', '2026-11-01T00:00:00Z'),
        until: stringParameter('Entries before this instant (ISO 8601)', '2026-12-01'),
      }),
      answer: [200, 'AdminAuditPageEnvelope', 'A page of entries, newest first'],
    }),
    handler: async (request) => {
      const { username } = request.query;
      const { actor, action } = auditFilters(request.query);
      const since = parseInstant(request.query.since, 'since');
      const until = parseInstant(request.query.until, 'until');
      const limit = pageLimit(request.query.limit);
      const beforeId = decodeCursor('audit', request.query.cursor) ?? undefined;
      // The store lists the newest matches oldest first; one more than the page tells whether another follows.
      const rows = (await store.listAudit({ username, actor, action, since, until, beforeId, limit: limit + 1 })).reverse();
      const { page, next } = nextCursor('audit', rows, limit, (entry) => entry.id);
      return success(page.map(auditJson), { next_cursor: next });
    },
  });
}
