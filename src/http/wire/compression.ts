// Compressed answers for the few bodies worth it (timezones, the OpenAPI document, docs assets): each compressed once and
// kept. Not @fastify/compress: it compresses every answer again on every request, and hooks every route.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import { matchesEtag } from './etag.ts';

export type Coding = 'br' | 'gzip' | 'identity';

type Bodies = Readonly<Record<Coding, Buffer>>;

/** A strong validator per coding (RFC 9110 §8.8.3: each is a different representation). */
export interface Precompressed {
  readonly bodies: Bodies;
  readonly etags: Readonly<Record<Coding, string>>;
}

/** Below this, compression saves less than the client spends undoing it. */
export const COMPRESS_AT_LEAST_BYTES = 1024;

/** Brotli 11 up to 256 KB, then 9: much quicker on the Swagger UI bundle (docs/operations.md#smaller-measured-choices). */
function brotliParams(size: number): Record<number, number> {
  return { [constants.BROTLI_PARAM_QUALITY]: size <= 256 * 1024 ? 11 : 9, [constants.BROTLI_PARAM_SIZE_HINT]: size };
}

export function precompress(body: Buffer, etag?: string): Precompressed {
  const tag = etag ?? `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const bare = tag.replace(/^(W\/)?"|"$/g, '');
  if (body.length < COMPRESS_AT_LEAST_BYTES) {
    return { bodies: { identity: body, gzip: body, br: body }, etags: { identity: tag, gzip: tag, br: tag } };
  }
  return {
    bodies: {
      identity: body,
      gzip: gzipSync(body, { level: 9 }),
      br: brotliCompressSync(body, { params: brotliParams(body.length) }),
    },
    etags: { identity: tag, gzip: `"${bare}-gzip"`, br: `"${bare}-br"` },
  };
}

function isCompressed(bodies: Bodies, coding: Coding): boolean {
  return coding !== 'identity' && bodies[coding] !== bodies.identity;
}

/** RFC 9110 §12.5.3: highest q, brotli before gzip on a tie, identity unless refused along with everything else. */
export function negotiateCoding(acceptEncoding: string | undefined): Coding {
  if (acceptEncoding === undefined || acceptEncoding === '') return 'identity';
  const q: Partial<Record<string, number>> = {};
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = part.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '') continue;
    const weight = parameters.map((parameter) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(parameter)?.[1]).find((value) => value !== undefined);
    q[coding] = weight === undefined ? 1 : Number(weight);
  }
  const weightOf = (coding: string) => q[coding] ?? (coding === 'identity' ? 1 : (q['*'] ?? 0));
  const br = weightOf('br');
  const gzip = Math.max(weightOf('gzip'), weightOf('x-gzip'));
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return 'identity';
}

/** With `Vary: Accept-Encoding`; a 304 when If-None-Match names the body in any coding (the content is the same). */
export function sendPrecompressed(request: FastifyRequest, reply: FastifyReply, body: Precompressed, contentType: string): FastifyReply {
  const coding = negotiateCoding(request.headers['accept-encoding']);
  reply.header('Vary', 'Accept-Encoding').header('ETag', body.etags[coding]);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined && Object.values(body.etags).some((etag) => matchesEtag(ifNoneMatch, etag))) {
    return reply.code(304).send();
  }
  if (isCompressed(body.bodies, coding)) reply.header('Content-Encoding', coding);
  return reply.type(contentType).send(body.bodies[coding]);
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
const CODING_SUFFIX = /-(?:gzip|br)"/g;

/**
 * Static files compressed once, in the background on the thread pool, sent as they are until then. The file server's
 * validator gets the coding as a suffix, taken off If-None-Match again, so a cached compressed copy revalidates with 304.
 */
export function precompressedFiles(root: string, urlPrefix: string): { onRequest: onRequestHookHandler; onSend: onSendHookHandler } {
  const files = new Map<string, Promise<Bodies | null>>();
  const settled = new Map<string, Bodies | null>();

  /** Null when not worth it (or unreadable); undefined while being made. */
  function compressed(name: string): Bodies | null | undefined {
    if (!files.has(name)) {
      const work = readFile(join(root, name))
        .then(async (body) => {
          if (body.length < COMPRESS_AT_LEAST_BYTES) return null;
          const [gzipped, brotli] = await Promise.all([
            gzipAsync(body, { level: 9 }),
            brotliAsync(body, { params: brotliParams(body.length) }),
          ]);
          return { identity: body, gzip: gzipped, br: brotli };
        })
        .catch(() => null);
      files.set(name, work);
      void work.then((result) => settled.set(name, result));
    }
    return settled.get(name);
  }

  const fileName = (url: string): string | null => {
    const path = url.split('?', 1)[0]!;
    if (!path.startsWith(urlPrefix)) return null;
    const name = path.slice(urlPrefix.length);
    return /^[\w-]+(?:\.[\w-]+)+$/.test(name) ? name : null; // one file of the folder, nothing above it
  };

  return {
    onRequest(request, _reply, done) {
      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch !== undefined && fileName(request.url) !== null) request.headers['if-none-match'] = ifNoneMatch.replace(CODING_SUFFIX, '"');
      done();
    },
    onSend(request, reply, payload, done) {
      const name = reply.statusCode === 200 ? fileName(request.url) : null;
      if (name === null) return done(null, payload);
      reply.header('Vary', 'Accept-Encoding');
      const coding = negotiateCoding(request.headers['accept-encoding']);
      const bodies = compressed(name);
      if (coding === 'identity' || bodies === null || bodies === undefined) return done(null, payload);
      (payload as { destroy?: () => void } | null)?.destroy?.(); // the file stream the static server opened
      const etag = reply.getHeader('etag');
      if (typeof etag === 'string') reply.header('ETag', etag.replace(/"$/, `-${coding}"`));
      reply.header('Content-Encoding', coding).header('Content-Length', bodies[coding].length);
      done(null, bodies[coding]);
    },
  };
}
