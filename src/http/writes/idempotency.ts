// Idempotency-Key on the public writes and every admin write: claims the key before the handler, replays or keeps the answer.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idempotencyKeyInUse } from '../../store/store-errors.ts';
import type { HeldIdempotencyKey, IdempotencyOwner, IdempotencyStore, StoredAnswer } from '../../store/store.ts';
import { HttpError } from '../failures/http-error.ts';
import { unreleasedKeys } from './unreleased-keys.ts';

/** The same key within it gets the first answer again. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Past it another request may take the key over (a crashed holder); the first then writes nothing (409). */
export const IDEMPOTENCY_LEASE_MS = 30_000;

/** Printable ASCII, spaces included (RFC 9110 trims those around a field value). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's own result, replayed; any other status gives the key up, so a retry runs again. */
function kept(status: number): boolean {
  return status < 500 && status !== 408 && status !== 409 && status !== 429;
}

/** All other headers (X-Request-Id, rate limits...) are the new request's own. */
export const REPLAYED_HEADERS = ['content-type', 'etag'] as const;

/** Method, path, parameters in any order and encoding, and If-Match (a write over another version is another request). */
export function fingerprintOf(request: FastifyRequest): string {
  return fingerprint(request.method, pathOf(request), request.headers['if-match'], (request.body ?? {}) as object);
}

/** The recorded pattern (routeOptions builds an object per read) with its parameters put in: rolling key A is not key B. */
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
  /** preHandler: claims the key, or answers at once (a replay, 409, 422); nothing without the header. */
  claim(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** For the store to complete with the write; undefined without one. */
  held(request: FastifyRequest): HeldIdempotencyKey | undefined;
  completed(request: FastifyRequest): void;
  /** onSend: keeps an answer the write did not record (400, 412...), or gives the key up (5xx), so a retry behaves. */
  settle(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
  /** onClose: stops retrying the releases the store refused (their leases free them). */
  close(): void;
}

/** Sealed before storing, opened before replaying: kept bodies are unreadable at rest. */
export interface AnswerSealing {
  seal(request: FastifyRequest, key: string, body: Uint8Array): Uint8Array;
  /** Throws when not sealed for this request's credential and key. */
  open(request: FastifyRequest, key: string, body: Uint8Array): Uint8Array;
}

export interface IdempotentWritesOptions {
  readonly store: IdempotencyStore;
  /** For answers holding secrets (the admin port's issued keys). */
  readonly sealing?: AnswerSealing;
  /** The calling account by default; on the admin port, the admin token. */
  readonly ownerOf?: (request: FastifyRequest) => IdempotencyOwner;
  readonly leaseMs?: number;
  readonly ttlMs?: number;
  /**
   * Before a kept 2xx is replayed: announces again the change it answered (credential-versions.ts), whose first announcement
   * may never have been made (the reply lost after the commit, or Redis down then). Rejects to fail the replay.
   */
  readonly beforeReplay?: (request: FastifyRequest, answer: StoredAnswer) => Promise<void>;
}

export function idempotentWrites(options: IdempotentWritesOptions): IdempotentWrites {
  const { store } = options;
  const leaseMs = options.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_KEY_TTL_MS;
  const ownerOf = options.ownerOf ?? ((request: FastifyRequest): IdempotencyOwner => ({ accountId: request.caller!.id }));
  // Per app, never per process.
  const holding = new WeakMap<FastifyRequest, HeldIdempotencyKey & { readonly claimedAt: number }>();
  const unreleased = unreleasedKeys(store);

  return {
    async claim(request, reply) {
      const key = request.headers['idempotency-key'];
      if (key === undefined) return undefined;
      if (typeof key !== 'string' || !VALID_KEY.test(key)) throw invalidKey();
      const held: HeldIdempotencyKey = { ...ownerOf(request), key, token: randomUUID() };
      const fingerprint = fingerprintOf(request);
      const claimedAt = Date.now();
      let outcome = await store.claimIdempotencyKey({ ...held, fingerprint, leaseMs, ttlMs });
      // Held by this instance's own earlier request, answered 5xx when the store could not release the key: the store
      // answers now (it just did), so that claim is released and this retry runs, as docs/api.md promises.
      if (outcome.state === 'in_progress' && outcome.fingerprint === fingerprint && (await unreleased.releaseNow(held))) {
        outcome = await store.claimIdempotencyKey({ ...held, fingerprint, leaseMs, ttlMs });
      }
      if (outcome.state === 'claimed') {
        holding.set(request, { ...held, claimedAt });
        return undefined;
      }
      if (outcome.fingerprint !== fingerprint) throw keyReused();
      if (outcome.state === 'in_progress') throw idempotencyKeyInUse();
      const body = options.sealing === undefined ? outcome.answer.body : options.sealing.open(request, key, outcome.answer.body);
      if (outcome.answer.status < 300) await options.beforeReplay?.(request, { ...outcome.answer, body });
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
        // The answer still goes out. A 2xx answered a write that committed (the admin port records its answer only now): its
        // claim is left to its lease, as after a crash, never freed early for a retry to run the write again.
        if (reply.statusCode < 300) {
          request.log.warn({ err: error }, 'idempotency key not settled after a 2xx: it is freed when its lease ends');
          return payload;
        }
        // Anything else changed nothing: released once the store answers (a retry from this instance releases it at once);
        // should this instance stop first, its lease frees it.
        request.log.warn({ err: error }, 'idempotency key not settled: released once the store answers');
        unreleased.keep(held, held.claimedAt + leaseMs, request.log);
      }
      return payload;
    },

    close: () => unreleased.close(),
  };
}

export function answerOf(reply: FastifyReply, body: Uint8Array): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: reply.statusCode, headers, body };
}
