// Rate budgets are charged per IPv4 address and per IPv6 /64, whatever way the address is spelled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetAddress, UNPARSABLE_ADDRESS } from '../../../../src/http/limits/budget-address.ts';

test('an IPv4 address is its own budget', () => {
  assert.equal(budgetAddress('203.0.113.7'), '203.0.113.7');
  assert.equal(budgetAddress('127.0.0.1'), '127.0.0.1');
});

test('an IPv4-mapped IPv6 address is the IPv4 client it stands for', () => {
  assert.equal(budgetAddress('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(budgetAddress('::FFFF:10.1.2.3'), '10.1.2.3');
});

test('every address of one IPv6 /64 shares one budget, however it is written', () => {
  const spellings = [
    '2001:db8:1:2::1',
    '2001:db8:1:2:ffff:ffff:ffff:ffff',
    '2001:0db8:0001:0002:0000:0000:0000:0001',
    '2001:DB8:1:2:abcd::',
    '2001:db8:1:2:0:0:1.2.3.4',
    'fe80::1%eth0'.replace('fe80::1', '2001:db8:1:2::9'),
  ];
  for (const address of spellings) assert.equal(budgetAddress(address), '2001:db8:1:2::/64', address);
});

test('different /64s get different budgets', () => {
  assert.notEqual(budgetAddress('2001:db8:1:2::1'), budgetAddress('2001:db8:1:3::1'));
  assert.notEqual(budgetAddress('2001:db8::1'), budgetAddress('2001:db9::1'));
  assert.equal(budgetAddress('::1'), '0:0:0:0::/64');
  assert.equal(budgetAddress('2001:db8::'), '2001:db8:0:0::/64');
  assert.equal(budgetAddress('::2001:db8'), '0:0:0:0::/64');
});

test('a port a proxy appends is dropped, so it cannot buy a budget per source port', () => {
  assert.equal(budgetAddress('203.0.113.7:5678'), '203.0.113.7');
  assert.equal(budgetAddress('203.0.113.7:1'), '203.0.113.7');
  assert.equal(budgetAddress('[2001:db8:1:2::1]:443'), '2001:db8:1:2::/64');
  assert.equal(budgetAddress('[2001:db8:1:2::1]'), '2001:db8:1:2::/64');
});

test('what is no address at all (a proxy\'s garbage, a closed connection) shares one budget', () => {
  for (const garbage of ['garbage', 'garbage2', 'unknown', '1.2.3', '1.2.3.4.5', '::g', '', '203.0.113.7:port']) {
    assert.equal(budgetAddress(garbage), UNPARSABLE_ADDRESS, JSON.stringify(garbage));
  }
  assert.equal(budgetAddress(undefined), UNPARSABLE_ADDRESS);
});
