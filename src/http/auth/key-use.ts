// Records an API key's last use off the request path: at most once per KEY_TOUCH_INTERVAL_MS, per deployment or per process.
import type { FastifyRequest } from 'fastify';
import type { CredentialStore } from '../../store/store.ts';
import type { KeyCharge } from '../limits/rate-limits.ts';

const TOUCH_MEMORY_LIMIT = 10_000;

/** Records the use of `request.keyId`; `charged`: what its charge answered (a Redis charge says whether a stamp is due). */
export type RecordUse = (request: FastifyRequest, charged: void | KeyCharge) => void;

export function keyUseRecorder(store: CredentialStore, touchIntervalMs: number): RecordUse {
  const lastTouched = new Map<string, number>();

  /** Not awaited by the request (a slow or locked store must not hold the answer back), and its failure fails nothing. */
  function touch(keyId: string, now: number, request: FastifyRequest): void {
    store.touchKey(keyId, new Date(now)).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record key use');
    });
  }

  // Across the deployment when the charge (through Redis, whose marker is set once per interval by whichever instance comes
  // first) says a stamp is due; else once per interval in this process, whose memory is bounded (past it a key may be
  // stamped again sooner).
  return function recordUse(request, charged) {
    const keyId = request.keyId!;
    const now = Date.now();
    if (charged !== undefined) {
      if (charged.touchDue) touch(keyId, now, request);
      return;
    }
    const previous = lastTouched.get(keyId);
    if (previous !== undefined && now - previous < touchIntervalMs) return;
    if (lastTouched.size >= TOUCH_MEMORY_LIMIT) lastTouched.clear();
    lastTouched.set(keyId, now);
    touch(keyId, now, request);
  };
}
