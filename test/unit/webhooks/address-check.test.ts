// Which addresses webhooks may reach, judged after resolution: names resolving to private ranges are refused too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkedAddress, isPublicAddress, parseWebhookUrl } from '../../../src/webhooks/address-check.ts';

test('private, loopback, link-local, unique-local, CGNAT, multicast and unspecified addresses are not public', () => {
  for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::6810:85e5', '::ffff:8.8.8.8']) assert.equal(isPublicAddress(address), true, address);
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
