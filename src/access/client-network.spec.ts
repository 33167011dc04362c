import { networkOf } from './client-network';

describe('networkOf', () => {
  const defaults = { ipv4Bits: 32, ipv6Bits: 64 };

  it('keeps an IPv4 address by default, and masks it to CLIENT_IPV4_PREFIX bits', () => {
    expect(networkOf('203.0.113.7', defaults)).toBe('203.0.113.7/32');
    expect(networkOf('203.0.113.7', { ...defaults, ipv4Bits: 24 })).toBe('203.0.113.0/24');
    expect(networkOf('203.0.113.7', { ...defaults, ipv4Bits: 20 })).toBe('203.0.112.0/20');
  });

  it('makes loopback one client whatever the setting', () => {
    expect(networkOf('127.0.0.1', defaults)).toBe('127.0.0.0/8');
    expect(networkOf('127.9.8.7', defaults)).toBe('127.0.0.0/8');
    expect(networkOf('::ffff:127.0.0.5', defaults)).toBe('127.0.0.0/8');
  });

  it('reads an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(networkOf('::ffff:198.51.100.4', defaults)).toBe('198.51.100.4/32');
  });

  it('masks IPv6 to CLIENT_IPV6_PREFIX bits, :: expanded, zone dropped', () => {
    expect(networkOf('2001:db8:0:1::1', defaults)).toBe('2001:db8:0:1:0:0:0:0/64');
    expect(networkOf('2001:db8:0:1:ffff:ffff:ffff:ffff', defaults)).toBe('2001:db8:0:1:0:0:0:0/64');
    expect(networkOf('2001:db8:0:2::1', defaults)).toBe('2001:db8:0:2:0:0:0:0/64');
    expect(networkOf('2001:db8:abcd:12ff::1', { ...defaults, ipv6Bits: 56 })).toBe('2001:db8:abcd:1200:0:0:0:0/56');
    expect(networkOf('fe80::1%eth0', defaults)).toBe('fe80:0:0:0:0:0:0:0/64');
    expect(networkOf('::1', { ...defaults, ipv6Bits: 128 })).toBe('0:0:0:0:0:0:0:1/128');
    expect(networkOf('64:ff9b::198.51.100.1', { ...defaults, ipv6Bits: 128 })).toBe('64:ff9b:0:0:0:0:c633:6401/128');
  });

  it('keeps what is not an address as it is', () => {
    expect(networkOf('unknown', defaults)).toBe('unknown');
  });
});
