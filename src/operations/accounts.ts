// Account operations, the one implementation the public routes, the CLI and the admin API share: rules checked, change and
// audit entry together.
import { checkDisplayName, checkUsername, checkUsernamePrefix } from '../domain/names.ts';
import { checkTimezone } from '../domain/timezone-choice.ts';
import type { TimezoneCatalog } from '../domain/timezones.ts';
import { accountNotFound } from '../store/store-errors.ts';
import type { Account, AccountStore, AccountUpdateOptions, AuditActor } from '../store/store.ts';

export interface CreateAccountInput {
  readonly username: string;
  /** Default: the username. */
  readonly name?: string;
  /** Default: UTC. */
  readonly timezone?: string;
  readonly premium?: boolean;
}

export async function createAccount(store: AccountStore, actor: AuditActor, timezones: TimezoneCatalog, input: CreateAccountInput): Promise<Account> {
  checkUsername(input.username);
  const name = checkDisplayName(input.name ?? input.username, 'name');
  const timezone = checkTimezone(timezones, input.timezone ?? 'UTC', 'timezone');
  return store.createAccount({ username: input.username, name, timezone, premium: input.premium ?? false }, actor);
}

export interface UpdateAccountInput {
  readonly username: string;
  readonly name?: string;
  readonly timezone?: string;
}

/** Name and timezone, each checked before either is written; each change is its own entry (account.updated). */
export async function updateAccount(store: AccountStore, actor: AuditActor, timezones: TimezoneCatalog, input: UpdateAccountInput): Promise<Account> {
  const name = input.name === undefined ? undefined : checkDisplayName(input.name, 'name');
  const timezone = input.timezone === undefined ? undefined : checkTimezone(timezones, input.timezone, 'timezone');
  let account = await store.findAccount(input.username);
  if (account === null) throw accountNotFound(input.username);
  if (name !== undefined) account = await store.updateName(account.id, name, actor);
  if (timezone !== undefined) account = await store.updateTimezone(account.id, timezone, actor);
  return account;
}

export interface ChangeAccountInput extends UpdateAccountInput {
  readonly premium?: boolean;
}

/**
 * The admin API's PATCH and the console's account form: name and timezone first, as they are what a rule can refuse, and a
 * refusal must leave Premium untouched too; then Premium. A value that does not change records nothing.
 */
export async function changeAccount(store: AccountStore, actor: AuditActor, timezones: TimezoneCatalog, input: ChangeAccountInput): Promise<Account> {
  const { username, name, timezone, premium } = input;
  let account =
    name !== undefined || timezone !== undefined ? await updateAccount(store, actor, timezones, { username, name, timezone }) : await findAccount(store, { username });
  if (premium !== undefined) account = await setPremium(store, actor, { username: account.username, premium });
  return account;
}

/**
 * POST /user: the caller's display name, checked here as for the CLI and the admin API. `conditions` (If-Match, the held
 * Idempotency-Key) are checked by the store inside the write's own transaction.
 */
export async function renameAccount(
  store: AccountStore,
  actor: AuditActor,
  input: { readonly accountId: number; readonly name: string },
  conditions?: AccountUpdateOptions,
): Promise<Account> {
  return store.updateName(input.accountId, checkDisplayName(input.name), actor, conditions);
}

/** POST /settings: the caller's timezone, by the same rule as updateAccount's. */
export async function changeTimezone(
  store: AccountStore,
  actor: AuditActor,
  timezones: TimezoneCatalog,
  input: { readonly accountId: number; readonly timezone: string },
  conditions?: AccountUpdateOptions,
): Promise<Account> {
  return store.updateTimezone(input.accountId, checkTimezone(timezones, input.timezone), actor, conditions);
}

export async function setPremium(store: AccountStore, actor: AuditActor, input: { readonly username: string; readonly premium: boolean }): Promise<Account> {
  return store.setPremium(input.username, input.premium, actor);
}

/** The account and all of its keys; its audit entries stay. */
export async function deleteAccount(store: AccountStore, actor: AuditActor, input: { readonly username: string }): Promise<void> {
  return store.deleteAccount(input.username, actor);
}

export async function findAccount(store: AccountStore, input: { readonly username: string }): Promise<Account> {
  const account = await store.findAccount(input.username);
  if (account === null) throw accountNotFound(input.username);
  return account;
}

export async function listAccounts(store: AccountStore): Promise<Account[]> {
  return store.listAccounts();
}

export interface PageAccountsInput {
  /** The last id of the previous page; null or absent: from the first. */
  readonly afterId?: number | null;
  readonly limit: number;
  /** Only usernames starting with this, ignoring case; 400 invalid_username_prefix unless 1 to 64 of the username alphabet. */
  readonly usernamePrefix?: string;
}

/** Accounts oldest first, a page at a time: the admin API's list, the console's search and `users list --prefix`. */
export async function pageAccounts(store: AccountStore, input: PageAccountsInput): Promise<Account[]> {
  const prefix = input.usernamePrefix === undefined ? undefined : checkUsernamePrefix(input.usernamePrefix);
  return store.pageAccounts(input.afterId ?? null, input.limit, prefix);
}
