// Idempotency-Key on every admin write (POST, PATCH, PUT, DELETE): the public port's machinery, keyed per admin token.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { headerSchemas } from '../http/wire/response-headers.ts';
import { documentedHeaders } from '../http/wire/schemas.ts';
import { idempotentWrites, type IdempotentWritesOptions } from '../http/writes/idempotency.ts';
import { ADMIN_FAILURE_DESCRIPTIONS } from './admin-failure-codes.ts';
import { answerOf } from './admin-schemas.ts';
import { adminAnswerSealing } from './sealed-answers.ts';

const WRITES: ReadonlySet<string> = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

const KEY_HEADER = documentedHeaders({
  'Idempotency-Key':
    '1 to 255 printable ASCII characters, unique per intended write (a UUID); keys are per admin token. The same key with the same ' +
    'request (method, path, body) within 24 hours gets the first answer again (Idempotent-Replayed: true) and does nothing twice; ' +
    'with another request, 422 idempotency_key_reused; while the first still runs, 409 idempotency_key_in_use.',
});

const REPLAYED = headerSchemas(['Idempotent-Replayed']);

/** Statuses whose answer a key keeps and replays (as on the public port: the request's own results, not 5xx, 408, 409, 429). */
function replayable(status: string): boolean {
  const code = Number(status);
  return code < 300 || code === 400 || code === 404;
}

type Hooks<T> = T | T[] | undefined;
const listOf = <T>(hooks: Hooks<T>): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

/**
 * Registers, in the admin routes' scope and before them, the hook that gives every write route the key's claim (first of its
 * preHandlers, so a replay runs nothing of the route) and its settling (last of its onSend hooks, so the answer kept is the
 * one sent), and documents the header and its 409 and 422 on each.
 */
export function adminIdempotency(admin: FastifyInstance, options: Omit<IdempotentWritesOptions, 'ownerOf' | 'sealing' | 'beforeReplay'>): void {
  const idempotency = idempotentWrites({ ...options, ownerOf: (request) => ({ adminTokenId: request.adminTokenId! }), sealing: adminAnswerSealing });
  // Its unreleased keys (unreleased-keys.ts) stop being retried with the app. No replay announces anything here: an admin
  // write's answer is kept only once sent, after its change was announced (unlike POST /user's, kept with its commit).
  admin.addHook('onClose', async () => idempotency.close());
  admin.addHook('onRoute', (route: RouteOptions) => {
    if (!listOf(route.method).some((method) => WRITES.has(method)) || route.config?.adminAccess !== 'token') return;
    route.preHandler = [idempotency.claim, ...listOf(route.preHandler)];
    route.onSend = [...listOf(route.onSend), idempotency.settle];
    if (route.schema === undefined || route.schema.hide === true) return;
    const responses = Object.entries((route.schema.response ?? {}) as Record<string, { headers?: object }>).map(([status, answer]) => [
      status,
      replayable(status) ? { ...answer, headers: { ...answer.headers, ...REPLAYED } } : answer,
    ]);
    route.schema = {
      ...route.schema,
      ...KEY_HEADER,
      response: {
        ...Object.fromEntries(responses),
        409: answerOf(409, 'AdminFailure409', ADMIN_FAILURE_DESCRIPTIONS[409]),
        422: answerOf(422, 'AdminFailure422', ADMIN_FAILURE_DESCRIPTIONS[422]),
      },
    };
  });
}
