// What every console page module is handed, and the audit trail's actor of a change made on one.
import type { FastifyRequest } from 'fastify';
import type { AdminAuthOptions } from '../http/auth/admin-auth.ts';
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { TimezoneCatalog } from '../domain/timezones.ts';
import { adminActor } from '../operations/actor.ts';
import type { AuditActor, Store } from '../store/store.ts';
import type { SessionSettings } from './sessions.ts';
import type { ConsoleViews } from './views.ts';

export interface ConsoleOptions {
  /** The store as the admin routes get it: credential changes announced to the other instances. */
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
  readonly environment: KeyEnvironment;
  readonly sessions: SessionSettings;
  readonly tokens: AdminAuthOptions;
  readonly webhooks: { readonly allowPrivate: boolean; readonly secretsKey: Buffer | null };
  readonly userAgent: string;
}

export interface ConsolePageDependencies extends ConsoleOptions {
  readonly views: ConsoleViews;
}

/** A console change is the session's admin token's, with its request id and address, as an admin API call would be. */
export function consoleActor(request: FastifyRequest): AuditActor {
  if (request.consoleSession === null) throw new Error('a console change without a session');
  return adminActor(request.consoleSession.tokenId, request.id, request.ip);
}
