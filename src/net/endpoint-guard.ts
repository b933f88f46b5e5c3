// The SSRF guard (docs/webhooks.md#why-it-works-this-way). A webhook URL must be https and resolve only to public addresses —
// checked at creation and again before every delivery, after DNS resolution — and the connection then goes to
// the very address that was checked, so DNS rebinding between check and connect is impossible.
// WEBHOOK_ALLOW_HOSTS (host names or CIDR ranges) lifts the rule for development and tests.
import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedEndpoint {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class UnsafeEndpoint extends Error {}

function isPublic(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const ip = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
  return ip.range() === 'unicast';
}

export function createEndpointGuard(allowHosts: string[]) {
  const allowedNames = new Set(allowHosts.filter((h) => !h.includes('/')));
  const allowedRanges = allowHosts.filter((h) => h.includes('/')).map((cidr) => ipaddr.parseCIDR(cidr));

  const allowedAddress = (ip: ipaddr.IPv4 | ipaddr.IPv6) =>
    allowedRanges.some(([range, bits]) => {
      const candidate = ip.kind() === range.kind() ? ip : ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : undefined;
      return candidate !== undefined && candidate.kind() === range.kind() && candidate.match([range, bits] as never);
    });

  return {
    async resolve(rawUrl: string): Promise<ResolvedEndpoint> {
      let url: URL;
      try {
        url = new URL(rawUrl);
      } catch {
        throw new UnsafeEndpoint('not a URL');
      }
      if (url.protocol !== 'https:') throw new UnsafeEndpoint('the URL must use https');
      if (url.username || url.password) throw new UnsafeEndpoint('the URL must not carry credentials');
      const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
      let addresses: { address: string; family: number }[];
      if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
      else {
        try {
          addresses = await dns.lookup(host, { all: true, verbatim: true });
        } catch {
          throw new UnsafeEndpoint(`the host ${host} does not resolve`);
        }
      }
      if (addresses.length === 0) throw new UnsafeEndpoint(`the host ${host} does not resolve`);
      const nameAllowed = allowedNames.has(host);
      // Every address must pass: a name with one internal address among public ones is refused.
      for (const { address } of addresses) {
        const ip = ipaddr.parse(address);
        if (!nameAllowed && !isPublic(ip) && !allowedAddress(ip)) throw new UnsafeEndpoint(`the host ${host} resolves to a non-public address`);
      }
      const chosen = addresses[0];
      return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
    },
  };
}

export type EndpointGuard = ReturnType<typeof createEndpointGuard>;
