// /console/audit: the audit trail, newest first, filtered by account, actor, action and time range, a page at a time.
import type { FastifyInstance } from 'fastify';
import { AUDIT_ACTIONS } from '../../domain/audit-events.ts';
import { parseInstant } from '../../domain/instants.ts';
import { auditFilters } from '../../operations/audit.ts';
import { auditJson } from '../../operations/representations.ts';
import { decodeCursor, nextCursor } from '../../http/wire/paging.ts';
import type { ConsolePageDependencies } from '../page-dependencies.ts';
import { field } from '../forms.ts';

const PAGE_SIZE = 25;

type AuditFilters = { username?: string; actor?: string; action?: string; since?: string; until?: string; cursor?: string };

/** A datetime-local input sends 2026-11-26T08:30, without a zone: the page says its times are UTC, so it is read as UTC. */
function utcInstant(raw: string | undefined, field: 'since' | 'until'): Date | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  return parseInstant(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value) ? `${value}Z` : value, field);
}

export async function auditPages(app: FastifyInstance, options: ConsolePageDependencies): Promise<void> {
  const { store, views } = options;

  app.get<{ Querystring: AuditFilters }>('/audit', async (request, reply) => {
    // Each filter read once through field(): a parameter repeated in the address is refused, not a crash on an array.
    const query = Object.fromEntries(
      (['username', 'actor', 'action', 'since', 'until', 'cursor'] as const).map((name) => [name, field(request.query, name)]),
    ) as AuditFilters;
    const filters = {
      username: query.username?.trim() || undefined,
      ...auditFilters({ actor: query.actor?.trim() || undefined, action: query.action || undefined }),
      since: utcInstant(query.since, 'since'),
      until: utcInstant(query.until, 'until'),
    };
    const beforeId = decodeCursor('audit', query.cursor) ?? undefined;
    // As the admin API reads it: the newest matches come oldest first, one more than the page tells whether another follows.
    const rows = (await store.listAudit({ ...filters, beforeId, limit: PAGE_SIZE + 1 })).reverse();
    const { page, next } = nextCursor('audit', rows, PAGE_SIZE, (entry) => entry.id);
    // The filters again, for the form and the next page's address.
    const kept = Object.fromEntries(
      (['username', 'actor', 'action', 'since', 'until'] as const).flatMap((name) => (query[name] ? [[name, query[name]!.trim()]] : [])),
    );
    return views.send(request, reply, 'audit', {
      title: 'Audit trail',
      section: 'audit',
      filters: kept,
      actions: AUDIT_ACTIONS,
      entries: page.map(auditJson),
      next: next === null ? null : `/console/audit?${new URLSearchParams({ ...kept, cursor: next })}`,
      first: query.cursor === undefined ? null : `/console/audit?${new URLSearchParams(kept)}`,
    });
  });
}
