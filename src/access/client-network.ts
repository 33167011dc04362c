import { isIPv4, isIPv6 } from 'node:net';

/** How many leading bits of an address name its client (CLIENT_IPV4_PREFIX, CLIENT_IPV6_PREFIX). */
export interface NetworkPrefixes {
  ipv4Bits: number;
  ipv6Bits: number;
}

/**
 * The network an address counts as, for rate limits and quotas: `<masked address>/<bits>`. Loopback
 * (127.0.0.0/8) is one client whatever the setting: every address of it is the same machine. An
 * IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is its IPv4 address. Anything else unparsable is kept as is.
 */
export function networkOf(address: string, prefixes: NetworkPrefixes): string {
  const plain = address.replace(/%.*$/, ''); // an IPv6 zone (fe80::1%eth0) is not part of the address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped) return ipv4Network(mapped[1], prefixes.ipv4Bits);
  if (isIPv4(plain)) return ipv4Network(plain, prefixes.ipv4Bits);
  if (isIPv6(plain)) return ipv6Network(plain, prefixes.ipv6Bits);
  return address;
}

function ipv4Network(address: string, bits: number): string {
  const octets = address.split('.').map(Number);
  const kept = octets[0] === 127 ? Math.min(bits, 8) : bits;
  return `${maskGroups(octets, 8, kept).join('.')}/${kept}`;
}

function ipv6Network(address: string, bits: number): string {
  return `${maskGroups(ipv6Groups(address), 16, bits)
    .map((group) => group.toString(16))
    .join(':')}/${bits}`;
}

/** The 8 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const first = parse(head);
  const last = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - first.length - last.length).fill(0);
  return [...first, ...zeros, ...last];
}

/** Keeps the first `bits` bits of `groups` (each `width` bits wide), zeroing the rest. */
function maskGroups(groups: number[], width: number, bits: number): number[] {
  return groups.map((group, i) => {
    const keep = Math.max(0, Math.min(width, bits - i * width));
    const mask = keep === 0 ? 0 : ((1 << width) - 1) ^ ((1 << (width - keep)) - 1);
    return group & mask;
  });
}
