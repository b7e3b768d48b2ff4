// Credentials: the Basic Authorization header, and which environment (live or sandbox) an API key belongs to.

const KEY_PREFIXES = { live: 'aapi_live_', sandbox: 'aapi_sandbox_' } as const;

export type Environment = keyof typeof KEY_PREFIXES;

/** The environment a key's prefix names, or undefined for a string that is no API key at all (the server says `malformed_key`). */
export function environmentOfKey(apiKey: string): Environment | undefined {
  if (apiKey.startsWith(KEY_PREFIXES.live)) return 'live';
  if (apiKey.startsWith(KEY_PREFIXES.sandbox)) return 'sandbox';
  return undefined;
}

/** `Basic base64(username:apiKey)` over the UTF-8 bytes, with the platform's btoa so it also runs outside Node. */
export function basicAuthorization(username: string, apiKey: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(`${username}:${apiKey}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}
