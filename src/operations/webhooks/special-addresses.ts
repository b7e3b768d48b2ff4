// Which addresses webhooks may reach: the IANA IPv4 and IPv6 Special-Purpose Address Registries, entry by entry, and the
// IPv6 forms that embed an IPv4 address, which are judged as that IPv4 address.
import { isIP } from 'node:net';

/** `refused`: unless WEBHOOK_ALLOW_PRIVATE=1. `embedded`: the IPv4 address the IPv6 one carries decides. */
export type Verdict = 'public' | 'refused' | 'embedded';

export interface AddressRange {
  readonly network: string;
  readonly bits: number;
  readonly name: string;
  readonly rfc: string;
  readonly verdict: Verdict;
  /** What the registry says and, where we differ from it, why. */
  readonly why: string;
  /** The last 32 bits, or 6to4's bits 16 to 47. */
  readonly ipv4At?: 'last32' | 'sixToFour';
}

const NOT_GLOBAL = 'IANA: not globally reachable';
// IANA marks these "globally reachable", but each is an anycast infrastructure address (PCP, TURN, AS112, AMT) or unrouted:
// what answers there is inside someone's network.
const ANYCAST = 'IANA: globally reachable, but an anycast infrastructure service, never a receiver';

/** Longest prefix wins: a /32 inside a refused /24 says why more precisely; the /0 rows are what no entry covers. */
export const IPV4_RANGES: readonly AddressRange[] = [
  { network: '0.0.0.0', bits: 0, name: 'Public IPv4', rfc: 'RFC 791', verdict: 'public', why: 'not in the special-purpose registry' },
  { network: '0.0.0.0', bits: 8, name: '"This network"', rfc: 'RFC 791', verdict: 'refused', why: NOT_GLOBAL },
  { network: '0.0.0.0', bits: 32, name: '"This host on this network"', rfc: 'RFC 1122', verdict: 'refused', why: NOT_GLOBAL },
  { network: '10.0.0.0', bits: 8, name: 'Private-Use', rfc: 'RFC 1918', verdict: 'refused', why: NOT_GLOBAL },
  { network: '100.64.0.0', bits: 10, name: 'Shared Address Space (CGNAT)', rfc: 'RFC 6598', verdict: 'refused', why: NOT_GLOBAL },
  { network: '127.0.0.0', bits: 8, name: 'Loopback', rfc: 'RFC 1122', verdict: 'refused', why: NOT_GLOBAL },
  { network: '169.254.0.0', bits: 16, name: 'Link Local', rfc: 'RFC 3927', verdict: 'refused', why: NOT_GLOBAL },
  { network: '172.16.0.0', bits: 12, name: 'Private-Use', rfc: 'RFC 1918', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.0.0', bits: 24, name: 'IETF Protocol Assignments', rfc: 'RFC 6890', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.0.0', bits: 29, name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.0.8', bits: 32, name: 'IPv4 dummy address', rfc: 'RFC 7600', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.0.9', bits: 32, name: 'Port Control Protocol Anycast', rfc: 'RFC 7723', verdict: 'refused', why: ANYCAST },
  { network: '192.0.0.10', bits: 32, name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155', verdict: 'refused', why: ANYCAST },
  { network: '192.0.0.170', bits: 32, name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.0.171', bits: 32, name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.0.2.0', bits: 24, name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.31.196.0', bits: 24, name: 'AS112-v4', rfc: 'RFC 7535', verdict: 'refused', why: ANYCAST },
  { network: '192.52.193.0', bits: 24, name: 'AMT', rfc: 'RFC 7450', verdict: 'refused', why: ANYCAST },
  { network: '192.88.99.0', bits: 24, name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC 7526', verdict: 'refused', why: 'deprecated anycast relay' },
  { network: '192.88.99.2', bits: 32, name: '6a44-relay anycast address', rfc: 'RFC 6751', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.168.0.0', bits: 16, name: 'Private-Use', rfc: 'RFC 1918', verdict: 'refused', why: NOT_GLOBAL },
  { network: '192.175.48.0', bits: 24, name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534', verdict: 'refused', why: ANYCAST },
  { network: '198.18.0.0', bits: 15, name: 'Benchmarking', rfc: 'RFC 2544', verdict: 'refused', why: NOT_GLOBAL },
  { network: '198.51.100.0', bits: 24, name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737', verdict: 'refused', why: NOT_GLOBAL },
  { network: '203.0.113.0', bits: 24, name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737', verdict: 'refused', why: NOT_GLOBAL },
  // Not in the special-purpose registry but in the IPv4 address space registry: no single receiver answers a group address.
  { network: '224.0.0.0', bits: 4, name: 'Multicast', rfc: 'RFC 5771', verdict: 'refused', why: 'a group, not a host' },
  { network: '240.0.0.0', bits: 4, name: 'Reserved', rfc: 'RFC 1112', verdict: 'refused', why: NOT_GLOBAL },
  { network: '255.255.255.255', bits: 32, name: 'Limited Broadcast', rfc: 'RFC 919', verdict: 'refused', why: NOT_GLOBAL },
];

export const IPV6_RANGES: readonly AddressRange[] = [
  // The IPv6 address space registry allocates only 2000::/3 to global unicast; the rest is reserved, ULA, link-local or multicast.
  { network: '::', bits: 0, name: 'Not global unicast', rfc: 'RFC 4291', verdict: 'refused', why: 'outside 2000::/3, the only global unicast space' },
  { network: '2000::', bits: 3, name: 'Global Unicast', rfc: 'RFC 4291', verdict: 'public', why: 'not in the special-purpose registry' },
  { network: '::', bits: 128, name: 'Unspecified Address', rfc: 'RFC 4291', verdict: 'refused', why: NOT_GLOBAL },
  { network: '::1', bits: 128, name: 'Loopback Address', rfc: 'RFC 4291', verdict: 'refused', why: NOT_GLOBAL },
  // Deprecated, but a dual-stack host may still route it as the IPv4 address it carries.
  { network: '::', bits: 96, name: 'IPv4-Compatible (deprecated)', rfc: 'RFC 4291', verdict: 'embedded', ipv4At: 'last32', why: 'judged as its IPv4 address' },
  { network: '::ffff:0:0', bits: 96, name: 'IPv4-mapped Address', rfc: 'RFC 4291', verdict: 'embedded', ipv4At: 'last32', why: 'judged as its IPv4 address' },
  { network: '::ffff:0:0:0', bits: 96, name: 'IPv4-translated (SIIT)', rfc: 'RFC 2765', verdict: 'embedded', ipv4At: 'last32', why: 'judged as its IPv4 address' },
  // IANA: globally reachable. A NAT64 gateway forwards it to the IPv4 address in its last 32 bits, so that address decides.
  { network: '64:ff9b::', bits: 96, name: 'IPv4-IPv6 Translation', rfc: 'RFC 6052', verdict: 'embedded', ipv4At: 'last32', why: 'judged as its IPv4 address' },
  { network: '64:ff9b:1::', bits: 48, name: 'IPv4-IPv6 Translation (local use)', rfc: 'RFC 8215', verdict: 'refused', why: NOT_GLOBAL },
  { network: '100::', bits: 64, name: 'Discard-Only Address Block', rfc: 'RFC 6666', verdict: 'refused', why: NOT_GLOBAL },
  { network: '100:0:0:1::', bits: 64, name: 'Dummy IPv6 Prefix', rfc: 'RFC 9780', verdict: 'refused', why: NOT_GLOBAL },
  { network: '2001::', bits: 23, name: 'IETF Protocol Assignments', rfc: 'RFC 2928', verdict: 'refused', why: NOT_GLOBAL },
  // Teredo reaches a host behind a NAT through relays; the issue refuses it whatever IPv4 addresses it carries.
  { network: '2001::', bits: 32, name: 'TEREDO', rfc: 'RFC 4380', verdict: 'refused', why: 'a tunnel to a host behind a NAT, never a receiver' },
  { network: '2001:1::1', bits: 128, name: 'Port Control Protocol Anycast', rfc: 'RFC 7723', verdict: 'refused', why: ANYCAST },
  { network: '2001:1::2', bits: 128, name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155', verdict: 'refused', why: ANYCAST },
  { network: '2001:1::3', bits: 128, name: 'DNS-SD Service Registration Protocol Anycast', rfc: 'RFC 9665', verdict: 'refused', why: ANYCAST },
  { network: '2001:2::', bits: 48, name: 'Benchmarking', rfc: 'RFC 5180', verdict: 'refused', why: NOT_GLOBAL },
  { network: '2001:3::', bits: 32, name: 'AMT', rfc: 'RFC 7450', verdict: 'refused', why: ANYCAST },
  { network: '2001:4:112::', bits: 48, name: 'AS112-v6', rfc: 'RFC 7535', verdict: 'refused', why: ANYCAST },
  { network: '2001:10::', bits: 28, name: 'ORCHID (deprecated)', rfc: 'RFC 4843', verdict: 'refused', why: NOT_GLOBAL },
  { network: '2001:20::', bits: 28, name: 'ORCHIDv2', rfc: 'RFC 7343', verdict: 'refused', why: 'IANA: globally reachable, but an identifier, not routed as a locator' },
  { network: '2001:30::', bits: 28, name: 'Drone Remote ID Protocol Entity Tags (DETs)', rfc: 'RFC 9374', verdict: 'refused', why: 'IANA: globally reachable, but an identifier, not routed as a locator' },
  { network: '2001:db8::', bits: 32, name: 'Documentation', rfc: 'RFC 3849', verdict: 'refused', why: NOT_GLOBAL },
  // 6to4 is a site's IPv6 behind the IPv4 address in bits 16 to 47: that address decides (2002:7f00:1:: is loopback).
  { network: '2002::', bits: 16, name: '6to4', rfc: 'RFC 3056', verdict: 'embedded', ipv4At: 'sixToFour', why: 'judged as its IPv4 address' },
  { network: '2620:4f:8000::', bits: 48, name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534', verdict: 'refused', why: ANYCAST },
  { network: '3fff::', bits: 20, name: 'Documentation', rfc: 'RFC 9637', verdict: 'refused', why: NOT_GLOBAL },
  { network: '5f00::', bits: 16, name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602', verdict: 'refused', why: NOT_GLOBAL },
  { network: 'fc00::', bits: 7, name: 'Unique-Local', rfc: 'RFC 4193', verdict: 'refused', why: NOT_GLOBAL },
  { network: 'fe80::', bits: 10, name: 'Link-Local Unicast', rfc: 'RFC 4291', verdict: 'refused', why: NOT_GLOBAL },
  { network: 'fec0::', bits: 10, name: 'Site-Local (deprecated)', rfc: 'RFC 3879', verdict: 'refused', why: NOT_GLOBAL },
  { network: 'ff00::', bits: 8, name: 'Multicast', rfc: 'RFC 4291', verdict: 'refused', why: 'a group, not a host' },
];

/** 32 bits for IPv4, 128 for IPv6; only for what `isIP` accepted. */
function ipv4Number(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

function ipv6Number(address: string): bigint {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const v4 = ipv4Number(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

interface CompiledRange {
  readonly range: AddressRange;
  readonly network: bigint;
  readonly mask: bigint;
}

function compile(ranges: readonly AddressRange[], width: number, toNumber: (address: string) => bigint): readonly CompiledRange[] {
  const all = (1n << BigInt(width)) - 1n;
  return ranges
    .map((range) => ({ range, network: toNumber(range.network), mask: all ^ ((1n << BigInt(width - range.bits)) - 1n) }))
    .sort((a, b) => b.range.bits - a.range.bits);
}

const V4 = compile(IPV4_RANGES, 32, ipv4Number);
const V6 = compile(IPV6_RANGES, 128, ipv6Number);

const longestMatch = (table: readonly CompiledRange[], value: bigint) => table.find((entry) => (value & entry.mask) === entry.network)!.range;

function dottedQuad(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

export interface Judgement {
  readonly public: boolean;
  readonly range: AddressRange;
  readonly embeddedIpv4?: string;
}

/** An IP literal; anything else is not public. */
export function judgeAddress(address: string): Judgement | null {
  const family = isIP(address);
  if (family === 4) {
    const range = longestMatch(V4, ipv4Number(address));
    return { public: range.verdict === 'public', range };
  }
  // A zone index (fe80::1%eth0) names an interface of this host: link-local, never public.
  if (family !== 6 || address.includes('%')) return null;
  const value = ipv6Number(address.toLowerCase());
  const range = longestMatch(V6, value);
  if (range.verdict !== 'embedded') return { public: range.verdict === 'public', range };
  const ipv4 = dottedQuad(range.ipv4At === 'sixToFour' ? (value >> 80n) & 0xffffffffn : value & 0xffffffffn);
  const inner = longestMatch(V4, ipv4Number(ipv4));
  return { public: inner.verdict === 'public', range: inner, embeddedIpv4: ipv4 };
}
