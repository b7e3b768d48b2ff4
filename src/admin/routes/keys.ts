// /admin/v0/accounts/{username}/keys and /admin/v0/keys/{key_id}: issue, list, roll and revoke API keys, and read a key's usage,
// through the domain operations.
import type { FastifyInstance } from 'fastify';
import { KEY_ID_LENGTH, type KeyEnvironment } from '../../domain/api-keys.ts';
import { success } from '../../http/wire/envelope.ts';
import { createKey, LABEL_MAX_LENGTH, listKeys, revokeKey, rollKey } from '../../operations/keys.ts';
import type { Store } from '../../store/store.ts';
import { actorOf } from '../admin-actor.ts';
import { adminRoute, fieldsOf, pathParameter, stringParameter, USERNAME_PATH } from '../admin-schemas.ts';
import { keyJson, keyUsageJson } from '../../operations/representations.ts';
import { readKeyUsage } from '../../operations/key-usage.ts';

export interface KeyRoutesOptions {
  readonly store: Store;
  /** Keys issued here are of the server's environment (aapi_live_ or aapi_sandbox_). */
  readonly environment: KeyEnvironment;
}

const KEY_ID_PATH = pathParameter('key_id', `The key’s id: the ${KEY_ID_LENGTH} characters after its prefix`, '3kTqv9ZbW2aX', {
  pattern: `^[A-Za-z0-9]{${KEY_ID_LENGTH}}$`,
  maxLength: KEY_ID_LENGTH,
});

const USERNAME_AND_KEY_ID_PATH = {
  ...USERNAME_PATH,
  required: [...USERNAME_PATH.required, ...KEY_ID_PATH.required],
  properties: { ...USERNAME_PATH.properties, ...KEY_ID_PATH.properties },
} as const;

type NewKeyBody = { label?: string; scope?: string; expires_at?: string };

export async function adminKeyRoutes(app: FastifyInstance, options: KeyRoutesOptions) {
  const { store, environment } = options;

  app.post<{ Params: { username: string }; Body: NewKeyBody }>('/accounts/:username/keys', {
    ...adminRoute('Keys', {
      operationId: 'createKey',
      summary: 'Issue an API key for an account',
      description: 'The answer holds the key itself, this once: only its hash is stored. Recorded as key.created.',
      params: USERNAME_PATH,
      body: fieldsOf({
        label: stringParameter(`A note to tell keys apart (at most ${LABEL_MAX_LENGTH} characters)`, 'billing-sync', { maxLength: LABEL_MAX_LENGTH }),
        scope: stringParameter('read (GET calls only) or write (every call; the default)', 'read', { enum: ['read', 'write'] }),
        expires_at: stringParameter('When the key stops working: an ISO 8601 date or time with its zone, within 10 years', '2027-03-01T00:00:00Z'),
      }),
      answer: [201, 'AdminIssuedKeyEnvelope', 'The key, shown this once'],
      conflict: true,
    }),
    handler: async (request, reply) => {
      const { label, scope, expires_at: expiresAt } = request.body;
      const issued = await createKey(store, actorOf(request), { username: request.params.username, environment, label, scope, expiresAt });
      return reply.code(201).send(success({ ...keyJson(issued.key), key: issued.token }));
    },
  });

  app.get<{ Params: { username: string } }>('/accounts/:username/keys', {
    ...adminRoute('Keys', {
      operationId: 'listKeys',
      summary: "List an account's keys",
      description: 'Every key, revoked and expired ones too, oldest first; never a secret.',
      params: USERNAME_PATH,
      answer: [200, 'AdminKeyListEnvelope', "The account's keys"],
    }),
    handler: async (request) => success((await listKeys(store, { username: request.params.username })).map(keyJson)),
  });

  app.get<{ Params: { username: string; key_id: string } }>('/accounts/:username/keys/:key_id/usage', {
    ...adminRoute('Keys', {
      operationId: 'readKeyUsage',
      summary: "A key's usage: requests per day by outcome, and its last addresses",
      description:
        'Today (UTC) and the 29 days before it, oldest first, each with its requests by outcome; days without any are left out. ' +
        'Counted by every instance in memory and written every KEY_USAGE_FLUSH_MS (10 s by default), so the last seconds may ' +
        'not show yet. Only requests that proved the key (its secret matched) are counted. Kept KEY_USAGE_RETENTION_DAYS days.',
      params: USERNAME_AND_KEY_ID_PATH,
      answer: [200, 'AdminKeyUsageEnvelope', "The key's usage"],
    }),
    handler: async (request) =>
      success(keyUsageJson(await readKeyUsage(store, { username: request.params.username, keyId: request.params.key_id }))),
  });

  app.post<{ Params: { key_id: string }; Body: { overlap?: string } }>('/keys/:key_id/roll', {
    ...adminRoute('Keys', {
      operationId: 'rollKey',
      summary: 'Roll a key: issue its successor, and let the old one expire',
      description:
        "The successor keeps the old key's account, label, scope and lifetime. The old key keeps working for the overlap " +
        '(default 24h; 0 stops it at once). A key is rolled once: one rolled already is refused (409 key_already_rolled, ' +
        'naming its successor), a revoked or expired key too (409 key_inactive). Recorded as key.rolled.',
      params: KEY_ID_PATH,
      body: fieldsOf({ overlap: stringParameter('How long the old key keeps working: 90d, 12h, 30m, or 0 (default 24h)', '1h') }),
      answer: [200, 'AdminRolledKeyEnvelope', 'Both keys, and the successor shown this once'],
      conflict: true,
    }),
    handler: async (request) => {
      const rolled = await rollKey(store, actorOf(request), { keyId: request.params.key_id, environment, overlap: request.body.overlap });
      return success({ old: keyJson(rolled.old), successor: keyJson(rolled.successor), key: rolled.token });
    },
  });

  app.delete<{ Params: { key_id: string } }>('/keys/:key_id', {
    ...adminRoute('Keys', {
      operationId: 'revokeKey',
      summary: 'Revoke a key',
      description: 'Servers refuse it from the next request. Revoking again keeps the first time and records nothing. Recorded as key.revoked.',
      params: KEY_ID_PATH,
      answer: [200, 'AdminKeyEnvelope', 'The key as revoked'],
    }),
    handler: async (request) => success(keyJson(await revokeKey(store, actorOf(request), { keyId: request.params.key_id }))),
  });
}
