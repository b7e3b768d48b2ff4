// Protects the API key format: prefix per environment, base62 body, checksum, unbiased randomness, hash-only storage.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';

import {
  composeKey,
  digestMatches,
  hashKey,
  keyDigest,
  issueKey,
  keyMatches,
  parseKey,
  randomBase62,
  type KeyEnvironment,
} from '../../../src/domain/api-keys.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX: Record<KeyEnvironment, string> = { live: 'aapi_live_', sandbox: 'aapi_sandbox_' };
const KEY_ID_LENGTH = 12;
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BODY_LENGTH = KEY_ID_LENGTH + SECRET_LENGTH + CHECKSUM_LENGTH;
const ENVIRONMENTS: readonly KeyEnvironment[] = ['live', 'sandbox'];

/** The next base62 character after `char` (wrapping), so the replacement is always still base62. */
function nextBase62(char: string): string {
  const index = BASE62.indexOf(char);
  return index === -1 ? 'A' : BASE62[(index + 1) % BASE62.length]!;
}

function replaceAt(text: string, index: number, char: string): string {
  return text.slice(0, index) + char + text.slice(index + 1);
}

function assertRefused(token: string, why: string): void {
  const result = parseKey(token);
  assert.equal(result.ok, false, `parseKey accepted ${JSON.stringify(token)} although ${why}`);
}

describe('issued keys', () => {
  for (const environment of ENVIRONMENTS) {
    test(`a ${environment} key starts with ${PREFIX[environment]} and has a 50-character base62 body`, () => {
      const key = issueKey(environment);
      assert.ok(key.token.startsWith(PREFIX[environment]), `token ${key.token} lacks the ${environment} prefix`);
      assert.equal(key.token.length, PREFIX[environment].length + BODY_LENGTH, 'token has the wrong length');
      const body = key.token.slice(PREFIX[environment].length);
      assert.match(body, /^[0-9A-Za-z]+$/, `body ${body} is not base62`);
      assert.equal(key.environment, environment);
    });

    test(`a ${environment} key carries its key id right after the prefix and shows only prefix and id`, () => {
      const key = issueKey(environment);
      assert.match(key.keyId, /^[0-9A-Za-z]{12}$/, 'key id is not 12 base62 characters');
      assert.equal(key.token.slice(PREFIX[environment].length, PREFIX[environment].length + KEY_ID_LENGTH), key.keyId);
      assert.equal(key.displayPrefix, PREFIX[environment] + key.keyId, 'display prefix must be the prefix and key id only');
      assert.ok(key.displayPrefix.length < key.token.length - SECRET_LENGTH, 'display prefix must not reveal any of the secret');
    });

    test(`parseKey accepts an issued ${environment} key and returns its key id`, () => {
      const key = issueKey(environment);
      const result = parseKey(key.token);
      assert.ok(result.ok, `parseKey refused a freshly issued key ${key.token}`);
      assert.equal(result.key.keyId, key.keyId, 'parseKey returned the wrong key id');
      assert.equal(result.key.environment, environment, 'parseKey returned the wrong environment');
      assert.equal(result.key.token, key.token);
    });
  }

  test('the stored hash of an issued key is the SHA-256 of the whole token', () => {
    const key = issueKey('live');
    const expected = createHash('sha256').update(key.token, 'utf8').digest();
    assert.ok(Buffer.from(key.hash).equals(expected), 'issued hash is not SHA-256 of the token');
  });

  test('two issued keys differ in key id and in secret', () => {
    const a = issueKey('live');
    const b = issueKey('live');
    assert.notEqual(a.token, b.token, 'two issued keys are identical');
    assert.notEqual(a.keyId, b.keyId, 'two issued keys share a key id');
    const secretOf = (token: string) => token.slice(PREFIX.live.length + KEY_ID_LENGTH, -CHECKSUM_LENGTH);
    assert.notEqual(secretOf(a.token), secretOf(b.token), 'two issued keys share a secret');
  });

  test('many issued keys are all distinct', () => {
    const tokens = new Set<string>();
    const keyIds = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const key = issueKey('sandbox');
      tokens.add(key.token);
      keyIds.add(key.keyId);
    }
    assert.equal(tokens.size, 2000, 'issued tokens repeated');
    assert.equal(keyIds.size, 2000, 'issued key ids repeated');
  });
});

describe('parseKey refuses malformed keys', () => {
  const live = issueKey('live');
  const sandbox = issueKey('sandbox');

  test('refuses a key with an unknown or altered prefix', () => {
    const body = live.token.slice(PREFIX.live.length);
    for (const prefix of ['aapi_test_', 'AAPI_LIVE_', 'aapi_live', 'aapi-live-', 'live_', '', 'xaapi_live_', 'ghp_']) {
      assertRefused(prefix + body, `its prefix is '${prefix}'`);
    }
  });

  test('refuses a sandbox body under the live prefix and the reverse', () => {
    assertRefused(PREFIX.live + sandbox.token.slice(PREFIX.sandbox.length), 'its checksum covers the sandbox prefix');
    assertRefused(PREFIX.sandbox + live.token.slice(PREFIX.live.length), 'its checksum covers the live prefix');
  });

  test('refuses a key one character too short or too long', () => {
    assertRefused(live.token.slice(0, -1), 'it lost its last character');
    assertRefused(live.token.slice(0, PREFIX.live.length) + live.token.slice(PREFIX.live.length + 1), 'it lost a body character');
    assertRefused(live.token + 'A', 'it has an extra character');
    assertRefused(live.token.slice(0, PREFIX.live.length + 20) + 'A' + live.token.slice(PREFIX.live.length + 20), 'a character was inserted');
  });

  test('refuses a key of the wrong length even when its checksum is right', () => {
    const secret = 'a'.repeat(SECRET_LENGTH);
    const shortId = composeKey('live', 'A'.repeat(KEY_ID_LENGTH - 1), secret);
    const longSecret = composeKey('live', 'A'.repeat(KEY_ID_LENGTH), secret + 'b');
    assertRefused(shortId.token, 'its key id is 11 characters');
    assertRefused(longSecret.token, 'its secret is 33 characters');
  });

  test('refuses non-base62 characters even when the checksum is right', () => {
    for (const bad of ['-', '_', '+', '/', '=', ' ', 'é', '.']) {
      const key = composeKey('live', 'B'.repeat(KEY_ID_LENGTH), 'c'.repeat(SECRET_LENGTH - 1) + bad);
      assertRefused(key.token, `its secret contains '${bad}'`);
    }
  });

  test('accepts a key exactly when its id and secret are base62, whatever characters they hold (property)', () => {
    // Base62 throughout, or with one character swapped for another: each range's neighbours ('/' and ':' beside 0-9, '@'
    // and '[' beside A-Z, '`' and '{' beside a-z), its ends, or anything else.
    const base62 = fc.constantFrom(...BASE62);
    const other = fc.oneof(fc.constantFrom(...'09AZaz', '/', ':', '@', '[', '`', '{', '-', '_', '=', ' ', '\u00e9', '\u0000', '\uffff'), fc.string({ minLength: 1, maxLength: 1 }));
    const run = (length: number) =>
      fc
        .tuple(fc.array(base62, { minLength: length, maxLength: length }), fc.option(fc.tuple(fc.nat(length - 1), other)))
        .map(([chars, swap]) => {
          if (swap !== null) chars[swap[0]] = swap[1].slice(0, 1);
          return chars.join('');
        });
    fc.assert(
      fc.property(run(KEY_ID_LENGTH), run(SECRET_LENGTH), fc.constantFrom(...ENVIRONMENTS), (id, secret, environment) => {
        // composeKey writes the right checksum for any id and secret: only the body's characters can make it wrong.
        const key = composeKey(environment, id, secret);
        const allBase62 = /^[0-9A-Za-z]*$/.test(id + secret);
        const parsed = parseKey(key.token);
        assert.equal(parsed.ok, allBase62, `parseKey ${parsed.ok ? 'accepted' : 'refused'} ${JSON.stringify(key.token)}`);
        if (parsed.ok) assert.equal(parsed.key.keyId, id);
      }),
      { numRuns: 2000 },
    );
  });

  test('refuses a non-base62 character put in place of a body character', () => {
    for (const bad of ['-', '_', '+', '/', '=', ' ', 'é', '\u0000']) {
      assertRefused(replaceAt(live.token, PREFIX.live.length + 5, bad), `it contains '${bad}'`);
    }
  });

  test('refuses the empty string and a bare prefix', () => {
    assertRefused('', 'it is empty');
    assertRefused(PREFIX.live, 'it is only a prefix');
    assertRefused(PREFIX.sandbox, 'it is only a prefix');
  });

  for (const key of [live, sandbox]) {
    test(`refuses a ${key.environment} key with any single character changed (every position)`, () => {
      for (let i = 0; i < key.token.length; i++) {
        const original = key.token[i]!;
        const changed = replaceAt(key.token, i, original === '_' ? 'x' : nextBase62(original));
        assert.notEqual(changed, key.token);
        assertRefused(changed, `position ${i} was changed from '${original}' to '${changed[i]}'`);
      }
    });
  }

  test('refuses two neighbouring characters swapped in the body', () => {
    const body = live.token.slice(PREFIX.live.length);
    let tried = 0;
    for (let i = 0; i + 1 < body.length; i++) {
      if (body[i] === body[i + 1]) continue;
      const swapped = body.slice(0, i) + body[i + 1] + body[i] + body.slice(i + 2);
      assertRefused(PREFIX.live + swapped, `characters ${i} and ${i + 1} of the body were swapped`);
      tried++;
    }
    assert.ok(tried > 0, 'no swap was tried');
  });
});

describe('keyMatches', () => {
  test('is true for the key whose hash is stored', () => {
    const key = issueKey('live');
    assert.equal(keyMatches(key.token, key.hash), true, 'the right key did not match its own hash');
  });

  test('is false when one character of the key differs', () => {
    const key = issueKey('live');
    for (const index of [PREFIX.live.length, PREFIX.live.length + KEY_ID_LENGTH + 3, key.token.length - 1]) {
      const changed = replaceAt(key.token, index, nextBase62(key.token[index]!));
      assert.equal(keyMatches(changed, key.hash), false, `a key changed at position ${index} matched`);
    }
  });

  test('is false for another issued key', () => {
    const a = issueKey('live');
    const b = issueKey('live');
    assert.equal(keyMatches(b.token, a.hash), false, 'a different key matched');
  });

  test('is false (and does not throw) when the stored hash has the wrong length', () => {
    const key = issueKey('live');
    assert.equal(keyMatches(key.token, Buffer.from(key.hash).subarray(0, 16)), false);
    assert.equal(keyMatches(key.token, new Uint8Array(0)), false);
  });
});

describe('keyDigest and digestMatches', () => {
  test('the digest is SHA-256 of the token, one character per byte', () => {
    for (const token of ['', 'aapi_live_x', issueKey('live').token, 'Jürgen ✓']) {
      const expected = createHash('sha256').update(token, 'utf8').digest();
      assert.ok(Buffer.from(keyDigest(token), 'latin1').equals(expected), `keyDigest(${JSON.stringify(token)}) is not SHA-256`);
      assert.equal(keyDigest(token).length, 32);
    }
  });

  test('matches the stored hash of the same key, and no hash that differs in any one byte or in length', () => {
    const key = issueKey('live');
    const digest = keyDigest(key.token);
    assert.equal(digestMatches(digest, key.hash), true, 'the right key did not match its own hash');
    for (let index = 0; index < 32; index++) {
      const changed = Buffer.from(key.hash);
      changed[index] = changed[index]! ^ 1;
      assert.equal(digestMatches(digest, changed), false, `a hash changed at byte ${index} matched`);
    }
    assert.equal(digestMatches(digest, Buffer.from(key.hash).subarray(0, 16)), false, 'a shorter hash matched');
    assert.equal(digestMatches(digest, new Uint8Array(0)), false, 'an empty hash matched');
    assert.equal(digestMatches(keyDigest(issueKey('live').token), key.hash), false, 'another key matched');
  });
});

describe('hashKey', () => {
  test('is SHA-256 of the token as raw bytes', () => {
    for (const token of ['', 'aapi_live_x', issueKey('sandbox').token, 'Jürgen ✓']) {
      const expected = createHash('sha256').update(token, 'utf8').digest();
      const actual = hashKey(token);
      assert.equal(actual.length, 32, 'a SHA-256 digest is 32 bytes');
      assert.ok(Buffer.from(actual).equals(expected), `hashKey(${JSON.stringify(token)}) is not SHA-256`);
    }
  });

  test('hashes the empty string to the well-known SHA-256 of nothing', () => {
    assert.equal(
      Buffer.from(hashKey('')).toString('hex'),
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });
});

describe('randomBase62', () => {
  test('returns exactly the requested number of base62 characters', () => {
    for (const length of [1, 12, 32, 100]) {
      const value = randomBase62(length);
      assert.equal(value.length, length);
      assert.match(value, /^[0-9A-Za-z]+$/, `'${value}' is not base62`);
    }
  });

  test('throws away bytes that would favour the first characters of the alphabet', () => {
    let calls = 0;
    // First all 255s (which a plain modulo would turn into '7'), then zeros.
    const source = (size: number) => Buffer.alloc(size, calls++ === 0 ? 255 : 0);
    assert.equal(randomBase62(4, source), '0000', 'bytes of 248 and above must be rejected, not reduced modulo 62');
  });

  test('maps a perfectly uniform byte stream to a perfectly uniform alphabet', () => {
    let next = 0;
    const cycling = (size: number) => {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = next++ % 256;
      return bytes;
    };
    // Each full run of 256 bytes keeps 248 of them: exactly 4 of each of the 62 characters.
    const value = randomBase62(248 * 10, cycling);
    const counts = new Map<string, number>();
    for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
    assert.equal(counts.size, 62, 'not every base62 character appeared');
    for (const [char, count] of counts) assert.equal(count, 40, `'${char}' appeared ${count} times instead of 40`);
  });

  test('shows no modulo bias in a large sample', () => {
    const perChar = 2000;
    const sample = randomBase62(62 * perChar);
    const counts = new Map<string, number>();
    for (const char of sample) counts.set(char, (counts.get(char) ?? 0) + 1);
    assert.equal(counts.size, 62, 'not every base62 character appeared');
    let chiSquare = 0;
    for (const char of BASE62) {
      const observed = counts.get(char) ?? 0;
      chiSquare += (observed - perChar) ** 2 / perChar;
    }
    // 61 degrees of freedom: mean 61, standard deviation about 11. A modulo-biased generator
    // (bytes 248..255 folded onto the first 8 characters) scores about 800 at this sample size;
    // 200 is more than 12 standard deviations above the mean, so a fair generator never fails.
    assert.ok(chiSquare < 200, `chi-square ${chiSquare.toFixed(1)} over 61 degrees of freedom suggests a biased alphabet`);
    const firstEight = [...BASE62.slice(0, 8)].reduce((sum, char) => sum + (counts.get(char) ?? 0), 0) / 8;
    const rest = [...BASE62.slice(8)].reduce((sum, char) => sum + (counts.get(char) ?? 0), 0) / 54;
    assert.ok(firstEight / rest < 1.1, `the first 8 characters appear ${(firstEight / rest).toFixed(3)}x as often as the others`);
  });
});
