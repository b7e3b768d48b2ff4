// Parses an `Authorization: Basic ...` header into a username and password (RFC 7617, UTF-8).

export type BasicCredentials = { readonly username: string; readonly password: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One character per byte when `encoded` is padded standard base64 (length a nonzero multiple of 4, checked by the caller).
 * `atob` checks and decodes in one pass (docs/operations.md#smaller-measured-choices); it drops whitespace first, which the
 * byte count then refuses.
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

/** Null when not Basic or undecodable; the caller answers 401 either way. */
export function parseBasicCredentials(header: string): BasicCredentials | null {
  const space = header.indexOf(' ');
  if (space === -1) return null;
  // Case-insensitive; 'Basic', as every client writes it, needs no lower-case copy.
  if (!(space === 5 && header.startsWith('Basic')) && header.slice(0, space).toLowerCase() !== 'basic') return null;
  const encoded = header.slice(space + 1).trim();
  if (encoded.length === 0 || encoded.length % 4 !== 0) return null;
  const bytes = strictBase64(encoded);
  if (bytes === null) return null;
  // All-ASCII bytes are already the UTF-8 text (no Buffer made); anything else is decoded as UTF-8, strictly.
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
