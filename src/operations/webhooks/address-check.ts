// Where webhooks may be sent: http(s) URLs whose every address is public, unless the operator allows private ones.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { judgeAddress } from './special-addresses.ts';
import { invalidWebhookUrl } from '../../domain/webhooks/webhook-errors.ts';

/**
 * Whether a delivery may go to this address: by the IANA special-purpose registries (special-addresses.ts), an IPv6 address
 * that carries an IPv4 one (::ffff:10.0.0.1, 64:ff9b::7f00:1, 2002:7f00:1::) judged as that IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  return judgeAddress(address)?.public === true;
}

/** Why an address is not public, for the refusal's message: the registry entry, and the IPv4 address it carries if it does. */
function whyNotPublic(address: string): string {
  const judgement = judgeAddress(address);
  if (judgement === null) return 'not an IP address';
  const { range, embeddedIpv4 } = judgement;
  return `${embeddedIpv4 === undefined ? '' : `it carries ${embeddedIpv4}: `}${range.name}, ${range.rfc}`;
}

/** The URL, if it is one webhooks may use at all: http or https, no credentials in it. Fails with invalid_webhook_url. */
export function parseWebhookUrl(text: string): URL {
  const url = URL.parse(text);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw invalidWebhookUrl(`A webhook URL must be an http:// or https:// URL; got '${text}'.`);
  }
  if (url.username !== '' || url.password !== '') throw invalidWebhookUrl('A webhook URL cannot hold a user name or password.');
  return url;
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolve = (host: string) => Promise<ResolvedAddress[]>;

export const resolveHost: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

/**
 * The address to connect to: the host's, resolved now, refused (invalid_webhook_url) when any of its addresses is not public
 * and private ones are not allowed. The caller connects to this address and no other, so a second resolution cannot differ.
 */
export async function checkedAddress(url: URL, allowPrivate: boolean, resolve: Resolve = resolveHost): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw invalidWebhookUrl(`The webhook host '${host}' does not resolve (${(error as { code?: string }).code ?? (error as Error).message}).`);
    }
    if (addresses.length === 0) throw invalidWebhookUrl(`The webhook host '${host}' has no address.`);
  }
  if (!allowPrivate) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused !== undefined) {
      throw invalidWebhookUrl(
        `The webhook host '${host}' is at ${refused.address}, which is not a public address (${whyNotPublic(refused.address)}); ` +
          'WEBHOOK_ALLOW_PRIVATE=1 allows private, loopback or link-local addresses.',
      );
    }
  }
  return addresses[0]!;
}
