// Protects the parsing of `Authorization: Basic ...` headers (RFC 7617, UTF-8): what decodes and what is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';

import { parseBasicCredentials } from '../../../../src/http/auth/basic-credentials.ts';

function basicHeader(userPass: string | Buffer, scheme = 'Basic'): string {
  const bytes = typeof userPass === 'string' ? Buffer.from(userPass, 'utf8') : userPass;
  return `${scheme} ${bytes.toString('base64')}`;
}

const KEY = 'aapi_live_0123456789ABcdefghijklmnopqrstuvwxyzABCDEF012345';

describe('parseBasicCredentials', () => {
  test('decodes a username and an API key', () => {
    assert.deepEqual(parseBasicCredentials(basicHeader(`alice:${KEY}`)), { username: 'alice', password: KEY });
  });

  test('accepts the scheme name in any case', () => {
    for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
      assert.deepEqual(
        parseBasicCredentials(basicHeader('alice:secret', scheme)),
        { username: 'alice', password: 'secret' },
        `scheme '${scheme}' was refused`,
      );
    }
  });

  test('splits at the first colon and keeps a password containing colons whole', () => {
    assert.deepEqual(parseBasicCredentials(basicHeader('alice:pa:ss:word:')), { username: 'alice', password: 'pa:ss:word:' });
  });

  test('keeps an empty password', () => {
    assert.deepEqual(parseBasicCredentials(basicHeader('alice:')), { username: 'alice', password: '' });
  });

  test('decodes a UTF-8 username and password', () => {
    assert.deepEqual(parseBasicCredentials(basicHeader('Jürgen:pässwörd✓')), { username: 'Jürgen', password: 'pässwörd✓' });
    assert.deepEqual(parseBasicCredentials(basicHeader('山田:😀')), { username: '山田', password: '😀' });
  });

  test('returns null for another scheme', () => {
    const encoded = Buffer.from('alice:secret').toString('base64');
    for (const header of [`Bearer ${encoded}`, `Digest ${encoded}`, `Basics ${encoded}`, `${encoded}`, 'Bearer abc.def.ghi']) {
      assert.equal(parseBasicCredentials(header), null, `'${header}' was accepted as Basic`);
    }
  });

  test('takes the credentials after any spaces between the scheme and them', () => {
    assert.deepEqual(parseBasicCredentials(`Basic   ${Buffer.from('a:b').toString('base64')}`), { username: 'a', password: 'b' });
  });

  test('returns null for Basic with nothing after it', () => {
    assert.equal(parseBasicCredentials('Basic'), null);
    assert.equal(parseBasicCredentials('Basic '), null);
    assert.equal(parseBasicCredentials(''), null);
  });

  test('returns null for invalid base64', () => {
    // Whitespace inside (which atob would drop: 'YTpiYWJj' is a:babc), unpadded base64 (which atob would take).
    const forgiven = ['YTpi    YWJj', 'YTpi\tYWJj', 'YTpi\fYWJj', 'YTpiYQ', 'YTpiYQ='];
    for (const encoded of ['!!!!', 'YWxp@2U6c2VjcmV0', 'not base64 at all', '====', 'YWxpY2U6c2VjcmV0===', '%%%%', ...forgiven]) {
      assert.equal(parseBasicCredentials(`Basic ${encoded}`), null, `'${encoded}' was decoded`);
    }
  });

  test('returns null when the decoded text has no colon', () => {
    assert.equal(parseBasicCredentials(basicHeader('alicesecret')), null);
    assert.equal(parseBasicCredentials(basicHeader(KEY)), null, 'a bare key without username was accepted');
  });

  test('returns null when the decoded bytes are not valid UTF-8', () => {
    const cases: Record<string, Buffer> = {
      'a lone 0xFF byte': Buffer.from([0x61, 0x3a, 0xff]),
      'Latin-1 ü in the username': Buffer.from([0x4a, 0xfc, 0x72, 0x67, 0x65, 0x6e, 0x3a, 0x6b]),
      'a truncated 3-byte sequence': Buffer.from([0x61, 0x3a, 0xe2, 0x9c]),
      'an overlong encoding of "/"': Buffer.from([0x61, 0x3a, 0xc0, 0xaf]),
      'an encoded surrogate': Buffer.from([0x61, 0x3a, 0xed, 0xa0, 0x80]),
    };
    for (const [label, bytes] of Object.entries(cases)) {
      assert.equal(parseBasicCredentials(basicHeader(bytes)), null, `${label} was decoded instead of refused`);
    }
  });

  test('decodes any bytes as the strict UTF-8 reference does: text when valid, null when not', () => {
    // The reference: the whole of RFC 7617's decoding, through a Buffer and a fatal TextDecoder.
    const reference = (bytes: Uint8Array) => {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        return null;
      }
      const colon = text.indexOf(':');
      return colon === -1 ? null : { username: text.slice(0, colon), password: text.slice(colon + 1) };
    };
    const texts = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }));
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      fc.tuple(texts, texts).map(([user, pass]) => new Uint8Array(Buffer.from(`${user}:${pass}`, 'utf8'))),
    );
    fc.assert(
      fc.property(bytes, (raw) => {
        assert.deepEqual(parseBasicCredentials(basicHeader(Buffer.from(raw))), reference(raw));
      }),
      { numRuns: 2000 },
    );
  });

  test('takes exactly the base64 the pattern /^[A-Za-z0-9+/]+={0,2}$/ takes, whatever the characters (property)', () => {
    // The reference: the pattern atob's forgiving decoding must be held to, then Buffer's decoding and the strict UTF-8 decoder.
    const pattern = /^[A-Za-z0-9+/]+={0,2}$/;
    const reference = (encoded: string) => {
      if (encoded.length === 0 || encoded.length % 4 !== 0 || !pattern.test(encoded)) return null;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
      } catch {
        return null;
      }
      const colon = text.indexOf(':');
      return colon === -1 ? null : { username: text.slice(0, colon), password: text.slice(colon + 1) };
    };
    // The alphabet, '=', and each character just outside a range of it ('/' and '0', '9' and ':', '@' and 'A'...).
    // ASCII whitespace too: atob drops it, and the parser must not.
    const characters = fc.constantFrom(...'AZaz09+/=', '@', '[', '`', '{', '.', ':', '-', '_', ' ', '\t', '\n', '\f', '\r', '\u00e9', '\u0000');
    const encoded = fc.oneof(
      fc.array(characters, { maxLength: 16 }).map((chars) => chars.join('')),
      fc.string({ minLength: 1, maxLength: 12 }).map((text) => Buffer.from(text, 'utf8').toString('base64')),
      fc.tuple(fc.string({ minLength: 1, maxLength: 9 }), fc.nat(11), characters).map(([text, at, char]) => {
        const valid = Buffer.from(text, 'utf8').toString('base64');
        const index = at % valid.length;
        return valid.slice(0, index) + char + valid.slice(index + 1);
      }),
    );
    fc.assert(
      fc.property(encoded, (text) => {
        assert.deepEqual(parseBasicCredentials(`Basic ${text}`), reference(text), `for Basic ${JSON.stringify(text)}`);
      }),
      { numRuns: 3000 },
    );
  });
});
