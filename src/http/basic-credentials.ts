// Parses an `Authorization: Basic ...` header into a username and password (RFC 7617, UTF-8).

export type BasicCredentials = { readonly username: string; readonly password: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const ASCII = /^[\x00-\x7f]*$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Returns null when the header is not Basic or cannot be decoded; the caller answers 401 either way. */
export function parseBasicCredentials(header: string): BasicCredentials | null {
  const space = header.indexOf(' ');
  if (space === -1) return null;
  // The scheme is case-insensitive; 'Basic', as every client writes it, is recognised without a lower-case copy.
  if (!(space === 5 && header.startsWith('Basic')) && header.slice(0, space).toLowerCase() !== 'basic') return null;
  const encoded = header.slice(space + 1).trim();
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !BASE64.test(encoded)) return null;
  // One character per decoded byte; when every byte is ASCII (the usual username and key), that is already the UTF-8 text,
  // and no Buffer is made. Anything else is decoded as UTF-8, strictly.
  const bytes = atob(encoded);
  let decoded: string;
  if (ASCII.test(bytes)) {
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
