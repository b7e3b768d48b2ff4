// An account's keys in the console: issue one (shown once), a key's page with its usage over 30 days, roll and revoke after a
// confirmation. Every change through the operations the admin API calls.
import type { FastifyInstance } from 'fastify';
import { keyState } from '../../domain/api-keys.ts';
import { KEY_USAGE_DAYS_SHOWN, KEY_USAGE_OUTCOMES, utcDayBefore } from '../../domain/key-usage.ts';
import { findAccount } from '../../operations/accounts.ts';
import { readKeyUsage } from '../../operations/key-usage.ts';
import { createKey, DEFAULT_OVERLAP, listKeys, revokeKey, rollKey } from '../../operations/keys.ts';
import { keyJson } from '../../operations/representations.ts';
import { keyNotFound } from '../../store/store-errors.ts';
import type { KeyUsage } from '../../store/store.ts';
import { consoleActor, type ConsolePageDependencies } from '../page-dependencies.ts';
import { optionalField, segment } from '../forms.ts';

type KeyParams = { username: string; key_id: string };

/** Every one of the last 30 days, oldest first, zero where the store has no row: a chart's x axis has no gaps. */
function usageDays(usage: KeyUsage, now: number) {
  const byDay = new Map(usage.days.map((day) => [day.day, day]));
  return Array.from({ length: KEY_USAGE_DAYS_SHOWN }, (_, index) => {
    const day = utcDayBefore(now, KEY_USAGE_DAYS_SHOWN - 1 - index);
    const counted = byDay.get(day);
    return { day, ...Object.fromEntries(KEY_USAGE_OUTCOMES.map((outcome) => [outcome, counted?.[outcome] ?? 0])) };
  });
}

/**
 * A key's last use as its page shows it: the later of the key's stamp (written at its first use in each KEY_TOUCH_INTERVAL_MS)
 * and its newest address (written every KEY_USAGE_FLUSH_MS, kept KEY_USAGE_RETENTION_DAYS). Two writers on two schedules:
 * either may be behind the other, and the page must not say "last used" and "never used" at once.
 */
function lastUseOf(stamped: string | null, usage: KeyUsage): string | null {
  const seen = usage.addresses[0]?.lastSeen ?? null;
  if (stamped === null || seen === null) return stamped ?? seen;
  return Date.parse(seen) > Date.parse(stamped) ? seen : stamped;
}

export async function keyPages(app: FastifyInstance, options: ConsolePageDependencies): Promise<void> {
  const { store, views, environment } = options;

  /** The key as its account lists it; key_not_found when it is not that account's. */
  async function keyOf(username: string, keyId: string) {
    const account = await findAccount(store, { username });
    const key = (await listKeys(store, { username: account.username })).find((each) => each.keyId === keyId);
    if (key === undefined) throw keyNotFound(keyId);
    return { account, key };
  }

  app.post<{ Params: { username: string } }>('/accounts/:username/keys', async (request, reply) => {
    const body = request.body;
    const issued = await createKey(store, consoleActor(request), {
      username: request.params.username,
      environment,
      label: optionalField(body, 'label'),
      scope: optionalField(body, 'scope'),
      expiresAt: optionalField(body, 'expires_at'),
    });
    // Answered here, not redirected to: the key is in this answer alone (Cache-Control: no-store), never in an address.
    return views.send(request, reply, 'key-issued', {
      title: 'Your new key',
      section: 'accounts',
      key: keyJson(issued.key),
      token: issued.token,
      replaced: null,
    }, 201);
  });

  app.get<{ Params: KeyParams }>('/accounts/:username/keys/:key_id', async (request, reply) => {
    const { account, key } = await keyOf(request.params.username, request.params.key_id);
    const now = Date.now();
    const usage = await readKeyUsage(store, { username: account.username, keyId: key.keyId });
    return views.send(request, reply, 'key', {
      title: `Key ${key.keyId}`,
      section: 'accounts',
      key: { ...keyJson(key), state: keyState(key, now) },
      lastUsed: lastUseOf(key.lastUsedAt, usage),
      days: usageDays(usage, now),
      outcomes: KEY_USAGE_OUTCOMES,
      addresses: usage.addresses,
    });
  });

  app.get<{ Params: KeyParams }>('/accounts/:username/keys/:key_id/roll', async (request, reply) => {
    const { account, key } = await keyOf(request.params.username, request.params.key_id);
    const back = `/console/accounts/${segment(account.username)}/keys/${key.keyId}`;
    return views.send(request, reply, 'confirm', {
      title: `Roll key ${key.keyId}?`,
      section: 'accounts',
      consequence: `A successor key is issued now and shown once. The old key ${key.keyId} keeps working for the overlap, then stops.`,
      action: `${back}/roll`,
      confirm: 'Roll the key',
      danger: false,
      cancel: back,
      fields: [{ name: 'overlap', label: 'Overlap', value: DEFAULT_OVERLAP, hint: 'How long the old key keeps working: 90d, 12h, 30m, or 0 to stop it at once.' }],
    });
  });

  app.post<{ Params: KeyParams }>('/accounts/:username/keys/:key_id/roll', async (request, reply) => {
    const { key } = await keyOf(request.params.username, request.params.key_id);
    const rolled = await rollKey(store, consoleActor(request), { keyId: key.keyId, environment, overlap: optionalField(request.body, 'overlap') });
    return views.send(request, reply, 'key-issued', {
      title: 'Your new key',
      section: 'accounts',
      key: keyJson(rolled.successor),
      token: rolled.token,
      replaced: keyJson(rolled.old),
    });
  });

  app.get<{ Params: KeyParams }>('/accounts/:username/keys/:key_id/revoke', async (request, reply) => {
    const { account, key } = await keyOf(request.params.username, request.params.key_id);
    const back = `/console/accounts/${segment(account.username)}/keys/${key.keyId}`;
    return views.send(request, reply, 'confirm', {
      title: `Revoke key ${key.keyId}?`,
      section: 'accounts',
      consequence: `Servers refuse the key ${key.keyId} from the next request. This cannot be undone.`,
      action: `${back}/revoke`,
      confirm: 'Revoke the key',
      danger: true,
      cancel: back,
      fields: [],
    });
  });

  app.post<{ Params: KeyParams }>('/accounts/:username/keys/:key_id/revoke', async (request, reply) => {
    const { account, key } = await keyOf(request.params.username, request.params.key_id);
    await revokeKey(store, consoleActor(request), { keyId: key.keyId });
    return reply.redirect(`/console/accounts/${segment(account.username)}/keys/${key.keyId}?notice=revoked`, 303);
  });

}
