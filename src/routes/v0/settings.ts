// GET/POST /settings and GET /settings/timezones: the caller's timezone and the list it is chosen from.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TimezoneCatalog } from '../../domain/timezones.ts';
import { success } from '../../http/wire/envelope.ts';
import {
  bodilessOf,
  BODY_MEDIA_TYPES,
  bodyOf,
  CONDITIONAL_READ_HEADERS,
  CONDITIONAL_WRITE_HEADERS,
  documentedHeaders,
  failuresFor,
  PREMIUM_SECURITY,
  successOf,
  withReplayedAnswers,
} from '../../http/wire/schemas.ts';
import { precompress, sendPrecompressed } from '../../http/wire/compression.ts';
import { answerAccountWrite } from '../../http/writes/account-writes.ts';
import { answerConditionally, taggedView } from '../../http/writes/conditional.ts';
import type { IdempotentWrites } from '../../http/writes/idempotency.ts';
import { changeTimezone } from '../../operations/accounts.ts';
import { keyActor } from '../../operations/actor.ts';
import type { Account, AccountStore, IdempotencyStore } from '../../store/store.ts';

export interface SettingsRoutesOptions {
  readonly store: AccountStore & IdempotencyStore;
  /** The app's one Idempotency-Key machinery for POST /user and /settings. */
  readonly idempotency: IdempotentWrites;
  readonly timezones: TimezoneCatalog;
}

const TIMEZONES_DESCRIPTION = 'Data is a list of valid timezones.';

function settingsView(account: Account) {
  return { timezone: account.timezone };
}

export async function settingsRoutes(app: FastifyInstance, options: SettingsRoutesOptions) {
  const { store, timezones, idempotency } = options;
  const taggedSettings = taggedView(settingsView);

  // The list changes only with a new build, so its body (already UTF-8, ~9 KB) and validator are computed once.
  // Compressed once too (gzip 9 KB -> 2 KB), for clients that ask for it.
  const timezonesBody = Buffer.from(JSON.stringify(success(timezones.zones, { description: TIMEZONES_DESCRIPTION })));
  const timezonesEtag = `"tz-${timezones.tzdata}-${createHash('sha256').update(timezonesBody).digest('base64url').slice(0, 16)}"`;
  const timezonesList = precompress(timezonesBody, timezonesEtag);

  app.get('/settings', {
    config: { access: 'premium' },
    schema: {
      operationId: 'getSettings',
      summary: "Read the caller's settings",
      description:
        "Answers with the caller's timezone, and its ETag: sent back in If-None-Match it gets a bodiless 304 while the settings are " +
        'unchanged, and in If-Match of POST /settings a write only over this version.',
      tags: ['Settings'],
      security: PREMIUM_SECURITY,
      ...CONDITIONAL_READ_HEADERS,
      response: {
        200: successOf('SettingsEnvelope', "The caller's settings, and the ETag naming this version of them", ['ETag']),
        304: bodilessOf(304, 'Not modified: the settings are as If-None-Match names them', ['ETag']),
        ...failuresFor({ premium: true, body: false }),
      },
    },
    // Synchronous: a GET answers from the cached credential's account, and its ETag is hashed once per account object.
    handler: (request, reply) => answerConditionally(request, reply, taggedSettings(request.caller!)),
  });

  app.get('/settings/timezones', {
    config: { access: 'premium' },
    schema: {
      operationId: 'listTimezones',
      summary: 'List the valid timezones',
      description:
        'IANA zone names (areas Africa, America, Antarctica, Arctic, Asia, Atlantic, Australia, Europe, Indian, Pacific) plus UTC, in code-point order with UTC last. ' +
        'Send the ETag back in If-None-Match to get a bodiless 304 while the list is unchanged.',
      tags: ['Settings'],
      security: PREMIUM_SECURITY,
      ...documentedHeaders({ 'If-None-Match': 'The ETag of the list the client holds' }),
      response: {
        200: successOf('TimezonesEnvelope', 'The timezone names, and the ETag naming this version of the list (in each coding)', [
          'ETag',
          'Vary',
          'Content-Encoding',
        ]),
        304: bodilessOf(304, 'Not modified: the list named by If-None-Match is current', ['ETag', 'Vary']),
        ...failuresFor({ premium: true, body: false }),
      },
    },
    handler: (request, reply) => {
      // no-cache: clients may keep the list but must revalidate, which costs them a 304.
      reply.header('Cache-Control', 'private, no-cache');
      sendPrecompressed(request, reply, timezonesList, 'application/json; charset=utf-8');
    },
  });

  app.post<{ Body: { timezone: string } }>('/settings', {
    config: { access: 'premium' },
    preHandler: idempotency.claim,
    onSend: idempotency.settle,
    schema: {
      operationId: 'updateSettings',
      summary: "Change the caller's timezone",
      description:
        'The timezone must be exactly a name from GET /settings/timezones (case-sensitive); a wrong one answers 400 invalid_timezone with suggestions. ' +
        'With If-Match, only over that version of the settings (else 412); with an Idempotency-Key, at most once (a repeat gets the first answer again).',
      tags: ['Settings'],
      security: PREMIUM_SECURITY,
      consumes: BODY_MEDIA_TYPES,
      body: bodyOf({ timezone: { description: 'A timezone from GET /settings/timezones (case-sensitive)', example: 'Europe/Kyiv' } }),
      ...CONDITIONAL_WRITE_HEADERS,
      response: withReplayedAnswers({
        200: successOf('SettingsEnvelope', 'The settings as changed, and the ETag naming this version of them', ['ETag']),
        ...failuresFor({ premium: true, body: true, updatesAccount: true, conditionalWrite: true }),
      }),
    },
    handler: async (request, reply) => {
      const actor = keyActor(request.keyId!, request.id, request.ip);
      const change = { accountId: request.caller!.id, timezone: request.body.timezone };
      return answerAccountWrite(request, reply, idempotency, taggedSettings, (conditions) => changeTimezone(store, actor, timezones, change, conditions));
    },
  });
}
