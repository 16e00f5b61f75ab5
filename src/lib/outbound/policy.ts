/**
 * The outbound URL policy: which addresses a request that a tenant can steer (reporting webhooks,
 * service callbacks, template hooks, pre-checks) may reach. Every URL a tenant supplies is
 * untrusted: Dialer calls public unicast addresses only, never loopback, private (RFC 1918),
 * carrier-grade NAT, link-local, unique-local, multicast, unspecified, reserved or cloud-metadata
 * addresses, in any spelling (IPv4-mapped IPv6, `2130706433`, `0x7f.1`: the WHATWG URL parser and
 * ipaddr.js normalise them). The operator may allow ranges or host names for on-premises receivers
 * (and tests) with DIALER_OUTBOUND_ALLOW. docs/security.md describes it for operators.
 *
 * This file decides; `fetch.ts` enforces at send time (every connection and every redirect).
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/**
 * Addresses of cloud metadata and platform services that are reachable from inside a VM and hand
 * out credentials. Most lie in ranges refused anyway (link-local, unique-local, CGNAT); Azure's
 * WireServer is public unicast, so it is listed.
 */
const METADATA_RANGES = ['169.254.169.254/32', '169.254.170.2/32', 'fd00:ec2::254/128', '100.100.100.200/32', '168.63.129.16/32', '192.0.0.192/32'].map(
  (cidr) => ipaddr.parseCIDR(cidr) as Range,
);

/** ipaddr.js range names, as people say them. Anything not `unicast` is refused. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private network address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'a translated IPv4 address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  benchmarking: 'a benchmarking address',
  amt: 'an AMT relay address',
  as112: 'an AS112 address',
  as112v6: 'an AS112 address',
  deprecated: 'a deprecated address',
  orchid2: 'an ORCHID address',
};

export class OutboundAllowListError extends Error {
  override name = 'OutboundAllowListError';
}

/** What DIALER_OUTBOUND_ALLOW permits: address ranges and host names. */
export interface OutboundAllowList {
  ranges: readonly Range[];
  /** Lower-case host names; `.example.internal` allows every name under it. */
  hosts: readonly string[];
}

export const EMPTY_ALLOW_LIST: OutboundAllowList = { ranges: [], hosts: [] };

/** Parses `10.20.0.0/16, 127.0.0.1, fd00::/8, receiver.internal, .corp.example` (CIDRs, addresses or host names). */
export function parseOutboundAllowList(raw: string | undefined): OutboundAllowList {
  const ranges: Range[] = [];
  const hosts: string[] = [];
  for (const entry of (raw ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean)) {
    if (entry.includes('/')) {
      try {
        ranges.push(ipaddr.parseCIDR(entry) as Range);
      } catch {
        throw new OutboundAllowListError(`DIALER_OUTBOUND_ALLOW: "${entry}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
      }
    } else if (ipaddr.isValid(entry)) {
      const address = ipaddr.parse(entry);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry)) {
      hosts.push(entry);
    } else {
      throw new OutboundAllowListError(`DIALER_OUTBOUND_ALLOW: "${entry}" is neither a CIDR range, an address nor a host name`);
    }
  }
  return { ranges, hosts };
}

function inRanges(address: Address, ranges: readonly Range[]): boolean {
  return ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits));
}

/** The forms an address is compared in: as written, and as IPv4 when it is IPv4-mapped IPv6. */
function forms(address: Address): Address[] {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) return [address, (address as ipaddr.IPv6).toIPv4Address()];
  return [address];
}

/** A literal address in a URL's host (`[::1]` included), or undefined for a name. */
export function literalAddress(hostname: string): Address | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : undefined;
}

export class OutboundPolicy {
  constructor(readonly allow: OutboundAllowList = EMPTY_ALLOW_LIST) {}

  /** Whether the operator allowed this host name (then its addresses are not checked). */
  hostAllowed(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    return this.allow.hosts.some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h));
  }

  /** Why an address may not be called, or undefined when it may. */
  addressRefusal(raw: string | Address): string | undefined {
    let address: Address;
    try {
      address = typeof raw === 'string' ? ipaddr.parse(raw) : raw;
    } catch {
      return 'an address that cannot be read';
    }
    const all = forms(address);
    if (all.some((a) => inRanges(a, this.allow.ranges))) return undefined;
    for (const a of all) {
      if (inRanges(a, METADATA_RANGES)) return 'a cloud metadata address';
      const range = a.range();
      if (range !== 'unicast' && !(range === 'ipv4Mapped' && all.length > 1)) return RANGE_WORDS[range] ?? `an address of the ${range} range`;
    }
    return undefined;
  }

  /**
   * Why a host (a name or a literal address, as in a SIP trunk's address) may not be reached, judged
   * without resolving names: undefined when the operator allowed it or it is not a refused literal.
   */
  hostRefusal(host: string): string | undefined {
    if (this.hostAllowed(host)) return undefined;
    const address = literalAddress(host);
    const why = address && this.addressRefusal(address);
    return why ? `points at ${why} (${host}), which Dialer does not call unless the operator allows it (DIALER_OUTBOUND_ALLOW)` : undefined;
  }

  /**
   * Why a URL may not be called, judged without resolving names (the write-time check): the
   * scheme, credentials, and a host that is a refused literal address. `{variable}` placeholders
   * stand for a plain word. A name that resolves to a refused address is caught when the request
   * is sent. Returns a message for the field, or undefined.
   */
  urlRefusal(raw: string): string | undefined {
    let url: URL;
    try {
      url = new URL(raw.replace(/\{[^{}]*\}/g, 'x'));
    } catch {
      return 'is not an absolute http(s) URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@); send them in a header';
    const address = literalAddress(url.hostname);
    if (address === undefined) return undefined;
    const why = this.addressRefusal(address);
    return why === undefined ? undefined : `points at ${why} (${url.hostname}), which Dialer does not call unless the operator allows it (DIALER_OUTBOUND_ALLOW)`;
  }
}
