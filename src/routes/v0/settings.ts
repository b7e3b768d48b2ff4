// GET/POST /settings and GET /settings/timezones: the caller's timezone and the list it is chosen from.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { checkTimezone } from '../../domain/timezone-choice.ts';
import type { TimezoneCatalog } from '../../domain/timezones.ts';
import { success } from '../../http/envelope.ts';
import { bodilessOf, BODY_MEDIA_TYPES, bodyOf, documentedHeaders, failuresFor, PREMIUM_SECURITY, successOf } from '../../http/schemas.ts';
import { precompress, sendPrecompressed } from '../../http/compression.ts';
import { keyActor } from '../../operations/actor.ts';
import type { Store } from '../../store/store.ts';

export interface SettingsRoutesOptions {
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
}

const TIMEZONES_DESCRIPTION = 'Data is a list of valid timezones.';

export async function settingsRoutes(app: FastifyInstance, options: SettingsRoutesOptions) {
  const { store, timezones } = options;

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
      description: "Answers with the caller's timezone.",
      tags: ['Settings'],
      security: PREMIUM_SECURITY,
      response: { 200: successOf('SettingsEnvelope', "The caller's settings"), ...failuresFor({ premium: true, body: false }) },
    },
    handler: (request) => success({ timezone: request.caller!.timezone }),
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
    schema: {
      operationId: 'updateSettings',
      summary: "Change the caller's timezone",
      description: 'The timezone must be exactly a name from GET /settings/timezones (case-sensitive); a wrong one answers 400 invalid_timezone with suggestions.',
      tags: ['Settings'],
      security: PREMIUM_SECURITY,
      consumes: BODY_MEDIA_TYPES,
      body: bodyOf({ timezone: { description: 'A timezone from GET /settings/timezones (case-sensitive)', example: 'Europe/Kyiv' } }),
      response: { 200: successOf('SettingsEnvelope', 'The settings as changed'), ...failuresFor({ premium: true, body: true, updatesAccount: true }) },
    },
    handler: async (request) => {
      const timezone = checkTimezone(timezones, request.body.timezone);
      const account = await store.updateTimezone(request.caller!.id, timezone, keyActor(request.keyId!, request.id, request.ip));
      return success({ timezone: account.timezone });
    },
  });
}
