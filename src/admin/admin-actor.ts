// The audit trail's actor of an admin API call: its token, its request id and its caller's address.
import type { FastifyRequest } from 'fastify';
import { adminActor } from '../operations/actor.ts';
import type { AuditActor } from '../store/store.ts';

export function actorOf(request: FastifyRequest): AuditActor {
  // Only routes behind adminAuthenticate call this; a missing token id is a bug, not a caller's mistake.
  if (request.adminTokenId === null) throw new Error('an admin change without an authenticated admin token');
  return adminActor(request.adminTokenId, request.id, request.ip);
}
