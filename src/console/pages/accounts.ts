// /console/accounts: search and page through accounts, create one; an account's page (name, timezone, Premium, its keys),
// its changes and its deletion after a confirmation. Every change through the operations the admin API calls.
import type { FastifyInstance } from 'fastify';
import { keyState } from '../../domain/api-keys.ts';
import { changeAccount, createAccount, deleteAccount, findAccount, pageAccounts } from '../../operations/accounts.ts';
import { MAX_LIFETIME_MS } from '../../operations/expiry.ts';
import { listKeys } from '../../operations/keys.ts';
import { utcDay } from '../../domain/key-usage.ts';
import { accountJson, keyJson } from '../../operations/representations.ts';
import { decodeCursor, nextCursor } from '../../http/wire/paging.ts';
import { consoleActor, type ConsolePageDependencies } from '../page-dependencies.ts';
import { field, optionalField, segment } from '../forms.ts';

const PAGE_SIZE = 25;
const DAY_MS = 86_400_000;

/** A checkbox sends its value when ticked and nothing when not; the hidden `premium_shown` says the box was on the form. */
function premiumOf(body: unknown): boolean | undefined {
  if (field(body, 'premium_shown') === undefined) return undefined;
  return field(body, 'premium') === 'true';
}

export async function accountPages(app: FastifyInstance, options: ConsolePageDependencies): Promise<void> {
  const { store, timezones, views } = options;

  app.get<{ Querystring: { prefix?: string; cursor?: string } }>('/accounts', async (request, reply) => {
    // Read through field(): a parameter repeated in the address is refused, not a crash on an array.
    const prefix = field(request.query, 'prefix')?.trim() || undefined;
    const cursor = field(request.query, 'cursor');
    const limit = PAGE_SIZE;
    const rows = await pageAccounts(store, { afterId: decodeCursor('accounts', cursor), limit: limit + 1, usernamePrefix: prefix });
    const { page, next } = nextCursor('accounts', rows, limit, (account) => account.id);
    const data = { title: 'Accounts', section: 'accounts' as const, prefix: prefix ?? '', accounts: page.map(accountJson), next, first: cursor === undefined };
    // htmx's search as you type asks for the results alone. After Back, htmx (no history cache here, so nothing of a page is
    // kept in the browser's storage) asks again with HX-History-Restore-Request and puts the answer in place of the whole
    // <body>: that answer must be the whole page, or the top bar, the search and the forms vanish.
    const searching = request.headers['hx-request'] === 'true' && request.headers['hx-history-restore-request'] !== 'true';
    if (searching) return views.send(request, reply, 'account-results', data);
    return views.send(request, reply, 'accounts', data);
  });

  app.post('/accounts', async (request, reply) => {
    const body = request.body;
    const account = await createAccount(store, consoleActor(request), timezones, {
      username: field(body, 'username') ?? '',
      name: optionalField(body, 'name'),
      timezone: optionalField(body, 'timezone'),
      premium: field(body, 'premium') === 'true',
    });
    return reply.redirect(`/console/accounts/${segment(account.username)}?notice=created`, 303);
  });

  app.get<{ Params: { username: string } }>('/accounts/:username', async (request, reply) => {
    const account = await findAccount(store, { username: request.params.username });
    const now = Date.now();
    const keys = (await listKeys(store, { username: account.username })).map((key) => ({ ...keyJson(key), state: keyState(key, now) }));
    return views.send(request, reply, 'account', {
      title: account.username,
      section: 'accounts',
      account: accountJson(account),
      keys,
      zones: timezones.zones,
      // The dates the "Expires on" field offers: a date is its day's 00:00 UTC, which must be after now and within 10 years.
      expiryDates: { min: utcDay(now + DAY_MS), max: utcDay(now + MAX_LIFETIME_MS) },
    });
  });

  app.post<{ Params: { username: string } }>('/accounts/:username', async (request, reply) => {
    const body = request.body;
    const account = await changeAccount(store, consoleActor(request), timezones, {
      username: request.params.username,
      name: field(body, 'name'),
      timezone: field(body, 'timezone'),
      premium: premiumOf(body),
    });
    return reply.redirect(`/console/accounts/${segment(account.username)}?notice=saved`, 303);
  });

  app.get<{ Params: { username: string } }>('/accounts/:username/delete', async (request, reply) => {
    const account = await findAccount(store, { username: request.params.username });
    return views.send(request, reply, 'confirm', {
      title: `Delete ${account.username}?`,
      section: 'accounts',
      consequence: `The account ${account.username} and all of its keys are deleted at once; their audit entries stay.`,
      action: `/console/accounts/${segment(account.username)}/delete`,
      confirm: 'Delete the account',
      danger: true,
      cancel: `/console/accounts/${segment(account.username)}`,
      fields: [],
    });
  });

  app.post<{ Params: { username: string } }>('/accounts/:username/delete', async (request, reply) => {
    const account = await findAccount(store, { username: request.params.username });
    await deleteAccount(store, consoleActor(request), { username: account.username });
    return reply.redirect('/console/accounts?notice=deleted', 303);
  });
}
