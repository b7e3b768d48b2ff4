// Protects the spotting of API keys in text that would be echoed or logged: in clear, percent-encoded, base64, cut short.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';

import { issueKey } from '../../../../src/domain/api-keys.ts';
import { loggablePath, loggableUsername, mayHoldKey, plainlyKeyless, scannedForKey } from '../../../../src/http/observability/key-redaction.ts';

const KEY = issueKey('live').token;
const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

describe('mayHoldKey', () => {
  test('spots a key in clear, in any case, with or without its prefix', () => {
    for (const text of [KEY, `x${KEY}y`, KEY.toUpperCase(), 'aapi_', KEY.slice('aapi_live_'.length), `id-${KEY.slice(10)}-z`]) {
      assert.equal(mayHoldKey(text), true, `missed '${text}'`);
    }
  });

  test('spots a key percent-encoded, once or twice', () => {
    assert.equal(mayHoldKey(percentEncoded(KEY)), true, 'missed it encoded once');
    assert.equal(mayHoldKey(percentEncoded(KEY).replaceAll('%', '%25')), true, 'missed it encoded twice');
  });

  test('spots a key inside base64, whatever the alignment', () => {
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const b64 = Buffer.from(`${prefix}alice:${KEY}`).toString('base64');
      assert.equal(mayHoldKey(b64), true, `missed base64 of '${prefix}alice:KEY'`);
      assert.equal(mayHoldKey(b64.slice(4)), true, `missed base64 starting mid-group (prefix '${prefix}')`);
    }
  });

  test('leaves ordinary text alone', () => {
    for (const text of ['/api/v0/user', 'alice', '0f8fad5b-d9cb-469f-a165-70867728950e', 'a'.repeat(60), 'Europe/Paris', 'x'.repeat(50)]) {
      assert.equal(mayHoldKey(text), false, `flagged '${text}'`);
    }
  });

  test('the quick pass clears no text the full scan would flag, however a key hides in it (property)', () => {
    // Pieces a key can hide among: the key, its body, its prefix in any case, its base64 at every alignment, percent-
    // encoding, and ordinary path text around them; plus arbitrary strings.
    const base64 = Buffer.from(`alice:${KEY}`).toString('base64');
    const piece = fc.oneof(
      fc.constantFrom(KEY, KEY.slice(10), KEY.slice(10, 40), 'aapi_', 'AAPI_', 'Aapi_x', '%61api_', '%25', '/', '/api/v0/', 'user', '?x=1', '-', '_', '+', '='),
      fc.nat(base64.length - 1).map((start) => base64.slice(start, start + 16 + (start % 20))),
      fc.string({ maxLength: 20 }),
      fc.stringMatching(/^[A-Za-z0-9+/_-]{10,20}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const text = pieces.join('');
        if (plainlyKeyless(text)) assert.equal(scannedForKey(text), false, `cleared ${JSON.stringify(text)}, which the scan flags`);
        assert.equal(mayHoldKey(text), text.length > 4096 || (!plainlyKeyless(text) && scannedForKey(text)));
      }),
      { numRuns: 3000 },
    );
  });

  test('the quick pass clears short ordinary paths and leaves a long run (\'/\' is base64), a mark or a percent to the scan', () => {
    // Near misses of the mark, each in a short run, are cleared too: only `aapi_` (in any case) is the mark.
    for (const path of ['/api/v0/user', '/api/v0/hello', '/healthz', '/api/v0/user?x=1', '/docs/', '/v0/aaxi_y', '/v0/xapi_', '/v0/aapj_', '/v0/aapi-', '/v0/qapi_']) {
      assert.equal(plainlyKeyless(path), true, `did not clear ${path}`);
    }
    for (const text of ['/x/aapi_/y', '/x/AaPi_', '/a%2Fb', 'abcdefghijklmnop', '/api/v0/settings', '/v0/abcdefgh-ijklmnop']) {
      assert.equal(plainlyKeyless(text), false, `cleared ${text}`);
    }
  });

  test('treats text too long to check as holding a key', () => {
    assert.equal(mayHoldKey('a'.repeat(5000)), true);
  });
});

describe('loggablePath', () => {
  test('drops the query string and the fragment', () => {
    assert.equal(loggablePath(`/api/v0/user?key=${KEY}&x=1`), '/api/v0/user');
    assert.equal(loggablePath('/api/v0/hello#frag'), '/api/v0/hello');
  });

  test('redacts from the first segment that could hold a key', () => {
    assert.equal(loggablePath(`/api/v0/${KEY}/more`), '/api/v0/[redacted]');
    assert.equal(loggablePath(`/api/v0/${percentEncoded(KEY)}`), '/api/v0/[redacted]');
  });

  test('redacts a whole path that holds a key spread over segments', () => {
    // base64 may contain '/' (here from the '???' before the key), so no single segment need show the key.
    const spread = Buffer.from(`???:${KEY}`).toString('base64');
    assert.ok(spread.includes('/'), `no '/' in ${spread}`);
    const logged = loggablePath(`/${spread}`);
    assert.ok(!logged.includes(spread), `the encoded credentials were logged: ${logged}`);
  });

  test('remembers only the paths the scan cleared: a path with a key is redacted every time, after any flood of others', () => {
    const keyed = `/api/v0/settings/${KEY}`;
    for (let round = 0; round < 3; round++) {
      // Long runs of base64 characters, which the quick pass leaves to the full scan (and so to the memory).
      for (let index = 0; index < 1500; index++) assert.equal(loggablePath(`/api/v0/settings/timezones${index}`), `/api/v0/settings/timezones${index}`);
      assert.equal(loggablePath(keyed), '/api/v0/settings/[redacted]');
      assert.equal(loggablePath('/api/v0/settings'), '/api/v0/settings');
      assert.equal(loggablePath(`/${Buffer.from(`alice:${KEY}`).toString('base64')}`), '/[redacted]');
    }
  });

  test('the memory of cleared paths holds the paths, not the URLs they were cut from (a long query string each)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heapUsed = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = heapUsed();
    // Fresh URLs, as the parser gives each request; each path a run of base64 characters that only the full scan clears.
    for (let index = 0; index < 500; index++) loggablePath(`/api/v0/settings/kept${index}?q=${'x'.repeat(16_000)}${index}`);
    const held = heapUsed() - before;
    assert.ok(held < 2 * 1024 * 1024, `500 remembered paths hold ${(held / 1048576).toFixed(1)} MiB: their whole URLs`);
  });

  test('cuts a long path to 256 characters', () => {
    const logged = loggablePath(`/${'a'.repeat(1000)}`);
    assert.equal(logged, `/${'a'.repeat(255)}...`);
  });
});

describe('loggableUsername', () => {
  test('keeps a username and redacts what cannot be one or could be a key', () => {
    assert.equal(loggableUsername('alice.b-c_d'), 'alice.b-c_d');
    for (const name of [KEY, 'has space', 'x'.repeat(65), '', 'aapi_someone']) {
      assert.equal(loggableUsername(name), '[redacted]', `'${name}' was kept`);
    }
  });
});

test('a long path is cut to what is logged, and a key that starts inside it is still redacted', () => {
  const key = 'aapi_live_' + 'A'.repeat(50);
  assert.equal(loggablePath(`/${'a'.repeat(100_000)}`).length, 259, 'a long path was not cut to 256 characters and "..."');
  const straddling = loggablePath(`/${'b'.repeat(240)}/${key}/${'c'.repeat(10_000)}`);
  assert.ok(!straddling.includes('aapi_live_'), `a key across the cut was logged: ${straddling}`);
  assert.ok(straddling.includes('[redacted]'));
});
