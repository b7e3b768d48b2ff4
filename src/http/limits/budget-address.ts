// The part of a client address that rate budgets are charged to: the whole IPv4 address, or the /64 of an IPv6 one.
//
// One IPv6 subscriber is routinely given a whole /64 (2^64 addresses), so budgeting single IPv6 addresses would hand anyone
// an unlimited supply of fresh budgets; the big public APIs count per /64 for the same reason. An IPv4-mapped IPv6 address
// (::ffff:192.0.2.1, as a dual-stack socket reports IPv4 clients) is the IPv4 client it stands for.

import { isIP, isIPv4 } from 'node:net';

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
const IPV4_WITH_PORT = /^(\d+\.\d+\.\d+\.\d+):\d+$/;
const IPV6_WITH_PORT = /^\[([^\]]+)\](?::\d+)?$/;
/** Every address that is none (a proxy's garbage, a port that could not be stripped) shares this one budget. */
export const UNPARSABLE_ADDRESS = 'unparsable';

/**
 * `ip` as Node or a trusted proxy reports it. A port some proxies append (`192.0.2.1:5678`, `[2001:db8::1]:443`) is
 * dropped, so it cannot buy a budget per source port; what is still no address shares one budget.
 */
export function budgetAddress(reported: string | undefined): string {
  // Undefined when the client's connection closed before the request was read.
  if (reported === undefined) return UNPARSABLE_ADDRESS;
  if (isIPv4(reported)) return reported; // nearly every request: one check, no pattern
  const ip = IPV4_WITH_PORT.exec(reported)?.[1] ?? IPV6_WITH_PORT.exec(reported)?.[1] ?? reported;
  const family = isIP(ip.split('%', 1)[0]!);
  if (family === 0) return UNPARSABLE_ADDRESS;
  if (family === 4) return ip;
  const mapped = MAPPED_IPV4.exec(ip);
  if (mapped !== null) return mapped[1]!;
  // A zone (fe80::1%eth0) names an interface, not a host.
  const address = ip.split('%', 1)[0]!.toLowerCase();
  const gap = address.indexOf('::');
  let groups: string[];
  if (gap === -1) {
    groups = address.split(':');
  } else {
    const head = address.slice(0, gap) === '' ? [] : address.slice(0, gap).split(':');
    const tail = address.slice(gap + 2) === '' ? [] : address.slice(gap + 2).split(':');
    // An embedded IPv4 tail (::1.2.3.4) fills two groups; it lies past the /64 either way.
    const tailGroups = tail.reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
    groups = [...head, ...Array<string>(Math.max(0, 8 - head.length - tailGroups)).fill('0'), ...tail];
  }
  const prefix = groups.slice(0, 4).map((group) => (group === '' ? '0' : group.replace(/^0+(?=.)/, '')));
  while (prefix.length < 4) prefix.push('0');
  return `${prefix.join(':')}::/64`;
}
