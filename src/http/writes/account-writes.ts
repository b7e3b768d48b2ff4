// Answers POST /user and /settings: the write made under If-Match and with its Idempotency-Key's answer, and the new ETag.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account, AccountUpdateOptions, StoredAnswer } from '../../store/store.ts';
import { ifMatchHolds, type Tagged } from './conditional.ts';
import { success, type SuccessEnvelope } from '../wire/envelope.ts';
import type { IdempotentWrites } from './idempotency.ts';

/** The success answer as bytes, so that the first answer and every replay of it are the same bytes. */
function successAnswer(answer: Tagged<unknown>): StoredAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', etag: answer.etag },
    body: Buffer.from(JSON.stringify(success(answer.data))),
  };
}

/**
 * Runs `write` with the request's conditions, which the store checks inside the write's own transaction: If-Match against
 * the ETag a GET would give now (`view` of the account as it is, with its tag), and the held Idempotency-Key, completed with this answer.
 * Answers with the new data and its ETag, which a client can send back in its next If-Match.
 */
export async function answerAccountWrite<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  idempotency: IdempotentWrites,
  view: (account: Account) => Tagged<T>,
  write: (options: AccountUpdateOptions) => Promise<Account>,
): Promise<SuccessEnvelope<T> | FastifyReply> {
  const ifMatch = request.headers['if-match'];
  const held = idempotency.held(request);
  let recorded: StoredAnswer | undefined;
  const account = await write({
    ...(ifMatch === undefined ? {} : { expect: (current: Account) => ifMatchHolds(ifMatch, view(current).etag) }),
    ...(held === undefined ? {} : { idempotency: { held, answer: (updated: Account) => (recorded = successAnswer(view(updated))) } }),
  });
  if (recorded !== undefined) {
    idempotency.completed(request);
    return reply.code(recorded.status).headers(recorded.headers).send(Buffer.from(recorded.body));
  }
  const { data, etag } = view(account);
  reply.header('ETag', etag);
  return success(data);
}
