// GET/POST /user: the caller's account and its display name; /account is a deprecated alias of the same.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DISPLAY_NAME_MAX_LENGTH } from '../../domain/names.ts';
import { answerAccountWrite } from '../../http/writes/account-writes.ts';
import { answerConditionally, taggedView } from '../../http/writes/conditional.ts';
import type { IdempotentWrites } from '../../http/writes/idempotency.ts';
import {
  bodilessOf,
  BODY_MEDIA_TYPES,
  bodyOf,
  CONDITIONAL_READ_HEADERS,
  CONDITIONAL_WRITE_HEADERS,
  failuresFor,
  PREMIUM_SECURITY,
  successOf,
  withReplayedAnswers,
  withRouteHeaders,
} from '../../http/wire/schemas.ts';
import { renameAccount } from '../../operations/accounts.ts';
import { keyActor } from '../../operations/actor.ts';
import type { Account, AccountStore, IdempotencyStore } from '../../store/store.ts';

export interface UserRoutesOptions {
  readonly store: AccountStore & IdempotencyStore;
  /** The app's one Idempotency-Key machinery for POST /user and /settings. */
  readonly idempotency: IdempotentWrites;
  /** Where this plugin is mounted, for the alias's Link header. */
  readonly apiPrefix: string;
}

function userView(account: Account) {
  return { user_id: account.id, username: account.username, name: account.name, timezone: account.timezone };
}

export async function userRoutes(app: FastifyInstance, options: UserRoutesOptions) {
  const { store, idempotency } = options;
  const taggedUser = taggedView(userView);
  const successor = `<${options.apiPrefix}/user>; rel="successor-version"`;

  // An example in the spec calls POST /account: it is served as an alias that tells clients where to move.
  // onSend, not onRequest: failures on the alias (401, 400...) carry the headers too.
  const markDeprecated = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('Deprecation', 'true').header('Link', successor);
    return payload;
  };

  for (const path of ['/user', '/account']) {
    const onSend = path === '/account' ? [markDeprecated] : [];
    const alias = path === '/account';
    const documented = (operationId: string, summary: string, description: string, responses: Parameters<typeof withRouteHeaders>[0]) => ({
      operationId: alias ? operationId.replace('User', 'Account') : operationId,
      summary: alias ? `${summary} (deprecated alias of ${options.apiPrefix}/user)` : summary,
      description: alias ? `${description} Deprecated: use /user; answers carry Deprecation: true and a Link to /user.` : description,
      tags: ['User'],
      security: PREMIUM_SECURITY,
      deprecated: alias,
      response: alias ? withRouteHeaders(responses, ['Deprecation', 'Link']) : responses,
    });

    app.get(path, {
      config: { access: 'premium' },
      onSend,
      schema: {
        ...documented(
          'getUser',
          "Read the caller's account",
          'Answers with user_id, username, display name and timezone, and their ETag: sent back in If-None-Match it gets a bodiless 304 ' +
            'while they are unchanged, and in If-Match of POST /user a write only over this version.',
          {
            200: successOf('UserEnvelope', "The caller's account, and the ETag naming this version of it", ['ETag']),
            304: bodilessOf(304, 'Not modified: the account is as If-None-Match names it', ['ETag']),
            ...failuresFor({ premium: true, body: false }),
          },
        ),
        ...CONDITIONAL_READ_HEADERS,
      },
      // Synchronous: a GET answers from the cached credential's account, and its ETag is hashed once per account object.
      handler: (request, reply) => answerConditionally(request, reply, taggedUser(request.caller!)),
    });

    app.post<{ Body: { name: string } }>(path, {
      config: { access: 'premium' },
      preHandler: idempotency.claim,
      onSend: [...onSend, idempotency.settle],
      schema: {
        ...documented(
          'updateUser',
          "Change the account's display name",
          'The name is stored and answered exactly as sent; other fields are unchanged. With If-Match, only over that version of ' +
            'the account (else 412); with an Idempotency-Key, at most once (a repeat gets the first answer again).',
          withReplayedAnswers({
            200: successOf('UserEnvelope', 'The account with its new name, and the ETag naming this version of it', ['ETag']),
            ...failuresFor({ premium: true, body: true, updatesAccount: true, conditionalWrite: true }),
          }),
        ),
        ...CONDITIONAL_WRITE_HEADERS,
        consumes: BODY_MEDIA_TYPES,
        body: bodyOf({
          name: {
            description:
              `The display name: 1 to ${DISPLAY_NAME_MAX_LENGTH} characters counted as Unicode code points (as JSON Schema counts lengths; ` +
              'an emoji is one), something visible, no control or bidirectional-override characters; kept exactly as sent. ' +
              'A name breaking these rules answers 400 invalid_name.',
            example: 'Alice Liddell',
            codePoints: { min: 1, max: DISPLAY_NAME_MAX_LENGTH },
          },
        }),
      },
      handler: async (request, reply) => {
        const actor = keyActor(request.keyId!, request.id, request.ip);
        const change = { accountId: request.caller!.id, name: request.body.name };
        return answerAccountWrite(request, reply, idempotency, taggedUser, (conditions) => renameAccount(store, actor, change, conditions));
      },
    });
  }
}
