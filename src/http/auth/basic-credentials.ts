// Parses an `Authorization: Basic ...` header into a username and password (RFC 7617, UTF-8).

export type BasicCredentials = { readonly username: string; readonly password: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The bytes of `encoded`, one character per byte, when it is base64 of the standard alphabet, padded: what
 * /^[A-Za-z0-9+/]+={0,2}$/ takes, at a length that is a multiple of 4 (the caller has checked it, and that it is not 0).
 *
 * `atob` (simdutf, in C++) checks and decodes in one pass, cheaper than a loop over the character codes
 * (docs/operations.md#smaller-measured-choices).
 * It is forgiving (WHATWG): it refuses any other character, and '=' anywhere but at the end, but first drops ASCII whitespace.
 * Whitespace dropped leaves fewer bytes than the length promises, so the count of bytes refuses it.
 */
function strictBase64(encoded: string): string | null {
  let bytes: string;
  try {
    bytes = atob(encoded);
  } catch {
    return null;
  }
  const length = encoded.length;
  const padding = encoded.charCodeAt(length - 1) !== 61 ? 0 : encoded.charCodeAt(length - 2) !== 61 ? 1 : 2;
  return bytes.length === (length / 4) * 3 - padding ? bytes : null;
}

/** Returns null when the header is not Basic or cannot be decoded; the caller answers 401 either way. */
export function parseBasicCredentials(header: string): BasicCredentials | null {
  const space = header.indexOf(' ');
  if (space === -1) return null;
  // The scheme is case-insensitive; 'Basic', as every client writes it, is recognised without a lower-case copy.
  if (!(space === 5 && header.startsWith('Basic')) && header.slice(0, space).toLowerCase() !== 'basic') return null;
  const encoded = header.slice(space + 1).trim();
  if (encoded.length === 0 || encoded.length % 4 !== 0) return null;
  const bytes = strictBase64(encoded);
  if (bytes === null) return null;
  // One character per decoded byte; when every byte is ASCII (the usual username and key: as many UTF-8 bytes as characters),
  // that is already the UTF-8 text, and no Buffer is made. Anything else is decoded as UTF-8, strictly.
  let decoded: string;
  if (Buffer.byteLength(bytes, 'utf8') === bytes.length) {
    decoded = bytes;
  } else {
    try {
      decoded = UTF8.decode(Buffer.from(encoded, 'base64'));
    } catch {
      return null;
    }
  }
  const colon = decoded.indexOf(':');
  if (colon === -1) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
