// Which addresses webhooks may reach, judged after resolution: names resolving to private ranges are refused too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkedAddress, isPublicAddress, parseWebhookUrl } from '../../../../src/operations/webhooks/address-check.ts';

test('private, loopback, link-local, unique-local, CGNAT, multicast and unspecified addresses are not public', () => {
  for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::6810:85e5', '::ffff:8.8.8.8']) assert.equal(isPublicAddress(address), true, address);
});

/** An IP literal as a URL's hostname spells it: the WHATWG parser rewrites ::127.0.0.1 as ::7f00:1, and that is what is judged. */
const hostOf = (literal: string) => new URL(`http://${literal}/`).hostname.replace(/^\[(.*)\]$/, '$1');

test("the issue's IPv6 spellings that carry a private IPv4 address, and the special ranges it names, are not public", () => {
  for (const literal of [
    '[::127.0.0.1]', // IPv4-compatible, ::/96
    '[::ffff:0:127.0.0.1]', // SIIT, ::ffff:0:0:0/96
    '[2002:7f00:1::]', // 6to4 of 127.0.0.1
    '[64:ff9b:1::7f00:1]', // local-use NAT64 of 127.0.0.1
    '[64:ff9b:1::a9fe:a9fe]', // local-use NAT64 of 169.254.169.254
    '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', // Teredo, 2001::/32
    '[2001:10::1]', // ORCHID, 2001:10::/28
    '[2001:20::1]', // ORCHIDv2, 2001:20::/28
    '[5f00::1]', // SRv6 SIDs, 5f00::/16
    '[3fff::1]', // documentation, 3fff::/20
  ]) {
    assert.equal(isPublicAddress(hostOf(literal)), false, `${literal} (${hostOf(literal)}) was judged public`);
  }
});

test('an IPv6 address that carries an IPv4 one is judged as that IPv4 address, however it is spelt', () => {
  const carrying = (ipv4: string) => {
    const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
    const high = ((a << 8) | b).toString(16);
    const low = ((c << 8) | d).toString(16);
    return [`::${ipv4}`, `::ffff:${ipv4}`, `::ffff:${high}:${low}`, `::ffff:0:${ipv4}`, `64:ff9b::${ipv4}`, `64:ff9b::${high}:${low}`, `2002:${high}:${low}::1`];
  };
  for (const inside of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '192.168.0.1', '100.64.0.1', '0.0.0.0', '224.0.0.1', '192.0.0.170']) {
    for (const address of carrying(inside)) assert.equal(isPublicAddress(address), false, `${address} carries ${inside}`);
  }
  for (const address of carrying('8.8.8.8')) assert.equal(isPublicAddress(address), true, `${address} carries 8.8.8.8, a public address`);
  // Teredo and local-use NAT64 are refused whatever they carry.
  assert.equal(isPublicAddress('2001:0:808:808::f7f7:f7f7'), false, 'Teredo');
  assert.equal(isPublicAddress('64:ff9b:1::808:808'), false, 'local-use NAT64');
});

// One address in every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (and multicast), with the verdict
// docs/api.md ("Which addresses") gives it; written out here rather than read from the code's own table.
const REGISTRY_SAMPLES: readonly [string, string, boolean][] = [
  ['0.0.0.0/8 "this network"', '0.1.2.3', false],
  ['0.0.0.0/32 "this host"', '0.0.0.0', false],
  ['10.0.0.0/8 private-use', '10.255.255.255', false],
  ['100.64.0.0/10 shared address space', '100.127.255.254', false],
  ['127.0.0.0/8 loopback', '127.8.9.10', false],
  ['169.254.0.0/16 link local', '169.254.0.1', false],
  ['172.16.0.0/12 private-use', '172.31.255.255', false],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.200', false],
  ['192.0.0.0/29 IPv4 service continuity', '192.0.0.1', false],
  ['192.0.0.8/32 dummy address', '192.0.0.8', false],
  ['192.0.0.9/32 PCP anycast (globally reachable: refused)', '192.0.0.9', false],
  ['192.0.0.10/32 TURN anycast (globally reachable: refused)', '192.0.0.10', false],
  ['192.0.0.170/32 NAT64/DNS64 discovery', '192.0.0.170', false],
  ['192.0.0.171/32 NAT64/DNS64 discovery', '192.0.0.171', false],
  ['192.0.2.0/24 TEST-NET-1', '192.0.2.1', false],
  ['192.31.196.0/24 AS112-v4 (globally reachable: refused)', '192.31.196.1', false],
  ['192.52.193.0/24 AMT (globally reachable: refused)', '192.52.193.1', false],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.1', false],
  ['192.88.99.2/32 6a44 relay anycast', '192.88.99.2', false],
  ['192.168.0.0/16 private-use', '192.168.255.1', false],
  ['192.175.48.0/24 AS112 direct delegation (globally reachable: refused)', '192.175.48.1', false],
  ['198.18.0.0/15 benchmarking', '198.19.255.255', false],
  ['198.51.100.0/24 TEST-NET-2', '198.51.100.7', false],
  ['203.0.113.0/24 TEST-NET-3', '203.0.113.7', false],
  ['224.0.0.0/4 multicast', '239.255.255.250', false],
  ['240.0.0.0/4 reserved', '250.1.2.3', false],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', false],
  ['an ordinary IPv4 address beside 192.0.0.0/24', '192.0.1.1', true],
  ['an ordinary IPv4 address beside 198.18.0.0/15', '198.20.0.1', true],
  ['::1/128 loopback', '::1', false],
  ['::/128 unspecified', '::', false],
  ['::ffff:0:0/96 IPv4-mapped, of a public address', '::ffff:1.1.1.1', true],
  ['64:ff9b::/96 NAT64, of a public address', '64:ff9b::1.1.1.1', true],
  ['64:ff9b:1::/48 local-use NAT64', '64:ff9b:1:2::3', false],
  ['100::/64 discard-only', '100::1', false],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::1', false],
  ['2001::/23 IETF protocol assignments', '2001:1ff::1', false],
  ['2001::/32 Teredo', '2001::1', false],
  ['2001:1::1/128 PCP anycast', '2001:1::1', false],
  ['2001:1::2/128 TURN anycast', '2001:1::2', false],
  ['2001:1::3/128 DNS-SD SRP anycast', '2001:1::3', false],
  ['2001:2::/48 benchmarking', '2001:2::1', false],
  ['2001:3::/32 AMT', '2001:3::1', false],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::1', false],
  ['2001:10::/28 ORCHID', '2001:1f::1', false],
  ['2001:20::/28 ORCHIDv2', '2001:2f::1', false],
  ['2001:30::/28 drone DETs', '2001:3f::1', false],
  ['2001:db8::/32 documentation', '2001:db8:1::1', false],
  ['2002::/16 6to4, of a public address', '2002:101:101::1', true],
  ['2620:4f:8000::/48 AS112 direct delegation', '2620:4f:8000::1', false],
  ['3fff::/20 documentation', '3fff:fff::1', false],
  ['5f00::/16 SRv6 SIDs', '5f00:1::1', false],
  ['fc00::/7 unique-local', 'fdff::1', false],
  ['fe80::/10 link-local', 'febf::1', false],
  ['fec0::/10 site-local (deprecated)', 'fec0::1', false],
  ['ff00::/8 multicast', 'ff05::1:3', false],
  ['outside 2000::/3, the global unicast space', '4000::1', false],
  ['global unicast beside 2001::/23', '2001:200::1', true],
  ['global unicast beside 2620:4f:8000::/48', '2620:4f:8001::1', true],
  ['global unicast beside 3fff::/20', '3ffe:ffff::1', true],
];

test('every entry of the special-purpose registries gets the verdict the docs give it', () => {
  const wrong = REGISTRY_SAMPLES.filter(([, address, expected]) => isPublicAddress(address) !== expected);
  assert.deepEqual(wrong.map(([entry, address, expected]) => `${entry}: ${address} should be ${expected ? 'public' : 'refused'}`), []);
});

test('only http and https URLs without credentials are webhook URLs', () => {
  assert.equal(parseWebhookUrl('https://hooks.example.com/x').hostname, 'hooks.example.com');
  for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', 'http://user:pw@example.com/']) {
    assert.throws(() => parseWebhookUrl(url), /webhook URL/, url);
  }
});

test('a name is judged by every address it resolves to, and the address returned is one of those checked', async () => {
  const resolving = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
  await assert.rejects(checkedAddress(new URL('http://rebind.example/'), false, resolving('93.184.216.34', '127.0.0.1')), /127\.0\.0\.1.*WEBHOOK_ALLOW_PRIVATE/);
  assert.deepEqual(await checkedAddress(new URL('http://ok.example/'), false, resolving('93.184.216.34')), { address: '93.184.216.34', family: 4 });
  assert.deepEqual(await checkedAddress(new URL('http://inside.example/'), true, resolving('10.0.0.5')), { address: '10.0.0.5', family: 4 });
  await assert.rejects(checkedAddress(new URL('http://[::1]:8080/'), false, resolving()), /::1/);
  await assert.rejects(
    checkedAddress(new URL('http://nowhere.example/'), false, async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    }),
    /does not resolve \(ENOTFOUND\)/,
  );
});
