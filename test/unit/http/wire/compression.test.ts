// Content negotiation for the precompressed bodies (RFC 9110 §12.5.3), and the bodies themselves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { negotiateCoding, precompress } from '../../../../src/http/wire/compression.ts';

test('picks the acceptable coding with the highest q, brotli before gzip on a tie, identity otherwise', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['deflate', 'identity'],
    ['*', 'br'],
    ['*;q=0.1, gzip;q=0.5', 'gzip'],
    ['GZIP ; Q=1', 'gzip'],
    ['x-gzip', 'gzip'],
    ['identity', 'identity'],
    ['br;q=nonsense', 'br'],
  ];
  for (const [header, expected] of cases) assert.equal(negotiateCoding(header), expected, `Accept-Encoding: ${header}`);
});

test('bodies decompress to the original; each coding has its own validator', () => {
  const body = Buffer.from(JSON.stringify(Array.from({ length: 400 }, (_, i) => `Zone/${i}`)));
  const compressed = precompress(body);
  assert.deepEqual(gunzipSync(compressed.bodies.gzip), body);
  assert.deepEqual(brotliDecompressSync(compressed.bodies.br), body);
  assert.ok(compressed.bodies.br.length < body.length / 3, 'brotli saved little on a repetitive body');
  assert.equal(new Set(Object.values(compressed.etags)).size, 3, 'two codings share an ETag');
});

test('a tiny body stays as it is in every coding', () => {
  const tiny = precompress(Buffer.from('{"a":1}'), '"t"');
  assert.equal(tiny.bodies.gzip, tiny.bodies.identity);
  assert.equal(tiny.etags.br, '"t"');
});
