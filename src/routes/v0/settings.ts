// GET/POST /settings and GET /settings/timezones: the caller's timezone and the list it is chosen from.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { checkTimezone } from '../../domain/timezone-choice.ts';
import type { TimezoneCatalog } from '../../domain/timezones.ts';
import { success } from '../../http/envelope.ts';
import { bodyOf, settingsSchema, successOf } from '../../http/schemas.ts';
import { matchesEtag } from '../../http/etag.ts';
import type { Store } from '../../store/store.ts';

export interface SettingsRoutesOptions {
  readonly store: Store;
  readonly timezones: TimezoneCatalog;
}

const TIMEZONES_DESCRIPTION = 'Data is a list of valid timezones.';

export async function settingsRoutes(app: FastifyInstance, options: SettingsRoutesOptions) {
  const { store, timezones } = options;

  // The list changes only with a new build, so its body and validator are computed once.
  const timezonesBody = JSON.stringify(success(timezones.zones, { description: TIMEZONES_DESCRIPTION }));
  const timezonesEtag = `"tz-${timezones.tzdata}-${createHash('sha256').update(timezonesBody).digest('base64url').slice(0, 16)}"`;

  app.get('/settings', {
    config: { access: 'premium' },
    schema: { response: { 200: successOf(settingsSchema) } },
    handler: async (request) => success({ timezone: request.caller!.timezone }),
  });

  app.get('/settings/timezones', {
    config: { access: 'premium' },
    handler: async (request, reply) => {
      // no-cache: clients may keep the list but must revalidate, which costs them a 304.
      reply.header('ETag', timezonesEtag).header('Cache-Control', 'private, no-cache');
      if (matchesEtag(request.headers['if-none-match'], timezonesEtag)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(timezonesBody);
    },
  });

  app.post<{ Body: { timezone: string } }>('/settings', {
    config: { access: 'premium' },
    schema: {
      body: bodyOf({ timezone: { description: 'A timezone from GET /settings/timezones (case-sensitive)' } }),
      response: { 200: successOf(settingsSchema) },
    },
    handler: async (request) => {
      const timezone = checkTimezone(timezones, request.body.timezone);
      const account = await store.updateTimezone(request.caller!.id, timezone);
      return success({ timezone: account.timezone });
    },
  });
}
