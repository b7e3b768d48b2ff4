// /admin/v0/accounts: create, page through, read, change and delete accounts, through the domain operations.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import type { TimezoneCatalog } from '../../domain/timezones.ts';
import { HttpError } from '../../http/failures/http-error.ts';
import { success } from '../../http/wire/envelope.ts';
import { changeAccount, createAccount, deleteAccount, findAccount, pageAccounts } from '../../operations/accounts.ts';
import type { Store } from '../../store/store.ts';
import { actorOf } from '../admin-actor.ts';
import { adminRoute, fieldsOf, pageQuery, PREMIUM_PARAMETER, stringParameter, USERNAME_PATH, USERNAME_SHAPE } from '../admin-schemas.ts';
import { DISPLAY_NAME_MAX_LENGTH, USERNAME_MAX_LENGTH } from '../../domain/names.ts';

/** As domain/names.ts checks a display name (400 invalid_name past it). */
const NAME_SHAPE = { maxLength: DISPLAY_NAME_MAX_LENGTH };
import { decodeCursor, nextCursor, pageLimit } from '../../http/wire/paging.ts';
import { accountJson } from '../../operations/representations.ts';

export interface AccountRoutesOptions {
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
}

/** A form sends "true"/"false", JSON sends true/false; anything else is the caller's to fix. */
function premiumOf(value: boolean | string | undefined): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new DomainError('invalid', 'invalid_parameter', "The parameter 'premium' must be true or false.", { field: 'premium' });
}

type AccountBody = { username: string; name?: string; timezone?: string; premium?: boolean | string };
type ChangeBody = { name?: string; timezone?: string; premium?: boolean | string };

export async function adminAccountRoutes(app: FastifyInstance, options: AccountRoutesOptions) {
  const { store, timezones } = options;

  app.post<{ Body: AccountBody }>('/accounts', {
    ...adminRoute('Accounts', {
      operationId: 'createAccount',
      summary: 'Create an account',
      description: 'name defaults to the username, timezone to UTC, premium to false. Recorded in the audit trail as account.created.',
      body: fieldsOf({
        username: stringParameter(`1 to ${USERNAME_MAX_LENGTH} letters, digits, '.', '_' or '-'; unique ignoring case`, 'alice', USERNAME_SHAPE),
        name: stringParameter(`Display name, at most ${DISPLAY_NAME_MAX_LENGTH} characters (default: the username)`, 'Alice Liddell', NAME_SHAPE),
        timezone: stringParameter('An IANA timezone name or UTC (default: UTC)', 'Europe/Kyiv'),
        premium: PREMIUM_PARAMETER,
      }, ['username']),
      answer: [201, 'AdminAccountEnvelope', 'The account as created'],
      conflict: true,
    }),
    handler: async (request, reply) => {
      const { username, name, timezone } = request.body;
      const premium = premiumOf(request.body.premium);
      const account = await createAccount(store, actorOf(request), timezones, { username, name, timezone, premium });
      return reply.code(201).send(success(accountJson(account)));
    },
  });

  app.get<{ Querystring: { username_prefix?: string; limit?: string; cursor?: string } }>('/accounts', {
    ...adminRoute('Accounts', {
      operationId: 'listAccounts',
      summary: 'List accounts, a page at a time',
      description:
        'Oldest first. With username_prefix, only the accounts whose username starts with it, ignoring case (each character ' +
        "only itself: '_' is no wildcard); 400 invalid_username_prefix unless 1 to 64 letters, digits, '.', '_' or '-'. " +
        'Follow meta.next_cursor (null on the last page) with ?cursor=, keeping the same username_prefix.',
      querystring: pageQuery('Accounts', 'YTEy', {
        username_prefix: stringParameter('Only usernames starting with this, ignoring case', 'ali', USERNAME_SHAPE),
      }),
      answer: [200, 'AdminAccountPageEnvelope', 'A page of accounts'],
    }),
    handler: async (request) => {
      const limit = pageLimit(request.query.limit);
      const after = decodeCursor('accounts', request.query.cursor);
      const rows = await pageAccounts(store, { afterId: after, limit: limit + 1, usernamePrefix: request.query.username_prefix });
      const { page, next } = nextCursor('accounts', rows, limit, (account) => account.id);
      return success(page.map(accountJson), { next_cursor: next });
    },
  });

  app.get<{ Params: { username: string } }>('/accounts/:username', {
    ...adminRoute('Accounts', {
      operationId: 'getAccount',
      summary: 'Read an account',
      description: 'Its name, timezone, Premium flag and creation time; 404 account_not_found when no account has this username. Reading records nothing in the audit trail.',
      params: USERNAME_PATH,
      answer: [200, 'AdminAccountEnvelope', 'The account'],
    }),
    handler: async (request) => success(accountJson(await findAccount(store, { username: request.params.username }))),
  });

  app.patch<{ Params: { username: string }; Body: ChangeBody }>('/accounts/:username', {
    ...adminRoute('Accounts', {
      operationId: 'updateAccount',
      summary: 'Change an account',
      description:
        'Any of premium, name and timezone; each is checked before any is written. Each change is its own audit entry ' +
        '(account.premium_changed, account.updated); a value that does not change records nothing.',
      params: USERNAME_PATH,
      body: fieldsOf({
        premium: PREMIUM_PARAMETER,
        name: stringParameter(`Display name, at most ${DISPLAY_NAME_MAX_LENGTH} characters`, 'Alice Liddell', NAME_SHAPE),
        timezone: stringParameter('An IANA timezone name or UTC', 'Asia/Tokyo'),
      }),
      answer: [200, 'AdminAccountEnvelope', 'The account as changed'],
    }),
    handler: async (request) => {
      const { username } = request.params;
      const { name, timezone } = request.body;
      const premium = premiumOf(request.body.premium);
      if (premium === undefined && name === undefined && timezone === undefined) {
        throw new HttpError(400, 'missing_parameter', 'Send at least one of premium, name and timezone.', { field: 'premium' });
      }
      const account = await changeAccount(store, actorOf(request), timezones, { username, name, timezone, premium });
      return success(accountJson(account));
    },
  });

  app.delete<{ Params: { username: string } }>('/accounts/:username', {
    ...adminRoute('Accounts', {
      operationId: 'deleteAccount',
      summary: 'Delete an account and all of its keys',
      description: 'Its audit entries stay (account.deleted is the last).',
      params: USERNAME_PATH,
      answer: [200, 'AdminDeletedAccountEnvelope', 'What was deleted'],
    }),
    handler: async (request) => {
      const account = await findAccount(store, { username: request.params.username });
      await deleteAccount(store, actorOf(request), { username: account.username });
      return success({ username: account.username, deleted: true });
    },
  });
}
