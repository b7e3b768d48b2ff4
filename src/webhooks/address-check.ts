// Where webhooks may be sent: http(s) URLs whose every address is public, unless the operator allows private ones.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { invalidWebhookUrl } from './webhook-errors.ts';

/** Loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, reserved and documentation ranges. */
function forbiddenRanges(): BlockList {
  const list = new BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
    ['224.0.0.0', 4], ['240.0.0.0', 4],
  ];
  for (const [network, bits] of v4) list.addSubnet(network, bits, 'ipv4');
  const v6: [string, number][] = [
    ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
  ];
  for (const [network, bits] of v6) list.addSubnet(network, bits, 'ipv6');
  return list;
}

const FORBIDDEN = forbiddenRanges();

/** Whether a delivery may go to this address; an IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as IPv4. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return isPublicAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return false;
  return !FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
        `The webhook host '${host}' is at ${refused.address}, a private, loopback or link-local address; WEBHOOK_ALLOW_PRIVATE=1 allows such addresses.`,
      );
    }
  }
  return addresses[0]!;
}
