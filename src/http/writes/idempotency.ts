// Idempotency-Key on the public POST /user and /settings and on every admin write: claims the key before the handler runs,
// replays a kept answer, keeps the answer.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idempotencyKeyInUse } from '../../store/store-errors.ts';
import type { HeldIdempotencyKey, IdempotencyOwner, IdempotencyStore, StoredAnswer } from '../../store/store.ts';
import { HttpError } from '../failures/http-error.ts';

/** How long a key is kept, answered or not: the same key within it gets the first answer again. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim holds while its request runs. Past it another request with the key may take it over (its first holder
 * crashed, say); the first then finds the key no longer its own and writes nothing (409). Longer than any request runs.
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;

/** 1 to 255 printable ASCII characters, spaces included (RFC 9110 trims those around a field value). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** Statuses whose answer is the request's own result and is replayed; any other gives the key up, so a retry runs again. */
function kept(status: number): boolean {
  return status < 500 && status !== 408 && status !== 409 && status !== 429;
}

/** The headers kept with an answer and replayed; all others (X-Request-Id, rate limits...) are the new request's own. */
export const REPLAYED_HEADERS = ['content-type', 'etag'] as const;

/**
 * The request as the key must find it again: method, path, the body's parameters in any order and either encoding, and
 * If-Match (a write over another version is another request).
 */
export function fingerprintOf(request: FastifyRequest): string {
  return fingerprint(request.method, pathOf(request), request.headers['if-match'], (request.body ?? {}) as object);
}

/**
 * The route's pattern as the pipeline recorded it when the route was added (request.routeOptions builds an object per read),
 * with the path's parameters as read put in: rolling key A is not rolling key B. A path without parameters is its pattern.
 */
function pathOf(request: FastifyRequest): string {
  const pattern = request.routeFacts?.url;
  if (pattern === undefined) return request.url;
  const params = (request.params ?? {}) as Record<string, string | undefined>;
  return pattern.replace(/:([A-Za-z0-9_]+)/g, (_whole, name: string) => encodeURIComponent(params[name] ?? ''));
}

export function fingerprint(method: string, path: string, ifMatch: string | undefined, body: object): string {
  // JSON's true and 1 are a form's "true" and "1": the same parameter in either encoding (the admin port's premium).
  const parameters = Object.entries(body)
    .map(([name, value]): [string, unknown] => [name, typeof value === 'boolean' || typeof value === 'number' ? String(value) : value])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([method, path, ifMatch ?? null, parameters]))
    .digest('base64url');
}

function invalidKey(): HttpError {
  return new HttpError(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
    field: 'Idempotency-Key',
  });
}

function keyReused(): HttpError {
  return new HttpError(
    422,
    'idempotency_key_reused',
    'This Idempotency-Key was used for a different request (another body, path or If-Match) in the last 24 hours; use a new key.',
    { field: 'Idempotency-Key' },
  );
}

export interface IdempotentWrites {
  /** preHandler: claims the request's key, or answers at once (a replay, 409, 422); nothing without the header. */
  claim(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** The key this request holds while its handler runs, for the store to complete with the write; undefined without one. */
  held(request: FastifyRequest): HeldIdempotencyKey | undefined;
  /** The handler's write recorded the answer with itself: nothing is left to keep. */
  completed(request: FastifyRequest): void;
  /** onSend: keeps an answer the write did not record (a 400, a 412...), or gives the key up (a 5xx), so a retry behaves. */
  settle(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
}

/** Keeps a kept answer's body unreadable at rest: sealed before it is stored, opened again before it is replayed. */
export interface AnswerSealing {
  seal(request: FastifyRequest, key: string, body: Uint8Array): Uint8Array;
  /** Throws when the body cannot be opened (it was not sealed for this request's credential and key). */
  open(request: FastifyRequest, key: string, body: Uint8Array): Uint8Array;
}

export interface IdempotentWritesOptions {
  readonly store: IdempotencyStore;
  /** For answers that hold secrets (the admin port's issued keys); none: bodies are stored as sent. */
  readonly sealing?: AnswerSealing;
  /** Whose keys the requests use: the calling account's by default; the admin port's, the admin token's. */
  readonly ownerOf?: (request: FastifyRequest) => IdempotencyOwner;
  /** Tests shorten them. */
  readonly leaseMs?: number;
  readonly ttlMs?: number;
}

export function idempotentWrites(options: IdempotentWritesOptions): IdempotentWrites {
  const { store } = options;
  const leaseMs = options.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_KEY_TTL_MS;
  const ownerOf = options.ownerOf ?? ((request: FastifyRequest): IdempotencyOwner => ({ accountId: request.caller!.id }));
  // Per app, never per process: the requests holding a key while their handler runs.
  const holding = new WeakMap<FastifyRequest, HeldIdempotencyKey>();

  return {
    async claim(request, reply) {
      const key = request.headers['idempotency-key'];
      if (key === undefined) return undefined;
      if (typeof key !== 'string' || !VALID_KEY.test(key)) throw invalidKey();
      const held: HeldIdempotencyKey = { ...ownerOf(request), key, token: randomUUID() };
      const fingerprint = fingerprintOf(request);
      const outcome = await store.claimIdempotencyKey({ ...held, fingerprint, leaseMs, ttlMs });
      if (outcome.state === 'claimed') {
        holding.set(request, held);
        return undefined;
      }
      if (outcome.fingerprint !== fingerprint) throw keyReused();
      if (outcome.state === 'in_progress') throw idempotencyKeyInUse();
      const body = options.sealing === undefined ? outcome.answer.body : options.sealing.open(request, key, outcome.answer.body);
      return reply.code(outcome.answer.status).headers(outcome.answer.headers).header('Idempotent-Replayed', 'true').send(Buffer.from(body));
    },

    held: (request) => holding.get(request),

    completed(request) {
      holding.delete(request);
    },

    async settle(request, reply, payload) {
      const held = holding.get(request);
      if (held === undefined) return payload;
      holding.delete(request);
      const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
      try {
        if (body !== null && kept(reply.statusCode)) {
          const stored = options.sealing === undefined ? body : options.sealing.seal(request, held.key, body);
          await store.completeIdempotencyKey(held, answerOf(reply, stored));
        } else {
          await store.releaseIdempotencyKey(held);
        }
      } catch (error) {
        // The answer still goes out; the claim runs out with its lease, and a retry then runs the request again.
        request.log.warn({ err: error }, 'idempotency key not settled: it is freed when its lease ends');
      }
      return payload;
    },
  };
}

/** The answer as kept: its status, the replayed headers it carries, its body byte for byte. */
export function answerOf(reply: FastifyReply, body: Uint8Array): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: reply.statusCode, headers, body };
}
