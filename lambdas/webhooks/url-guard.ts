/*
 * No SSRF: a webhook URL is https (the local stack alone also allows http to 127.0.0.1 and
 * localhost), its host resolves, and every address it resolves to is public. The address checked
 * is the one connected to (post.ts), so a DNS answer that changes between check and use is moot.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../core/errors.ts';

/** A URL that passed the checks, and the address the delivery connects to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export interface UrlPolicy {
  /** The local stack only: http://127.0.0.1 and http://localhost (and their loopback addresses). */
  allowLocalHttp: boolean;
  /** Resolves a host name to its addresses; node:dns by default. */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);

/**
 * IPv6's global unicast block (2000::/3). ipaddr.js calls every address it has no name for
 * 'unicast', so ::/96 (IPv4-compatible: ::7f00:1 is 127.0.0.1 to some stacks), ::2 or 4000::1
 * would pass on that alone; an IPv6 address must also lie in this block.
 */
const GLOBAL_UNICAST_V6 = /* @__PURE__ */ ipaddr.parseCIDR('2000::/3');

/**
 * An IPv6 address as RFC 4291 reads it, through the URL parser: ipaddr.js reads the dotted
 * spelling ::a.b.c.d (IPv4-compatible, ::/96) as ::ffff:a.b.c.d (IPv4-mapped), so ::127.0.0.1
 * and ::7f00:1, one address, would be judged apart. Null when it is no IPv6 address.
 */
function canonicalIpv6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

/**
 * The address as a connection reaches it: ::ffff:a.b.c.d (IPv4-mapped) is the IPv4 address
 * a.b.c.d, so a mapped private address is seen as private. Null for what is no address.
 */
function unmapped(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = address.includes(':') ? canonicalIpv6(address) : address;
  if (text === null || !ipaddr.isValid(text)) return null;
  const parsed = ipaddr.parse(text);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

/** Whether an address is one a webhook may reach: global unicast only (after unmapping IPv4-in-IPv6). */
export function isPublicAddress(address: string): boolean {
  const parsed = unmapped(address);
  if (parsed === null) return false;
  // Every named range (loopback, private, linkLocal with 169.254.169.254, carrierGradeNat,
  // uniqueLocal, unspecified, multicast, reserved, 6to4, teredo…) is refused; only 'unicast' passes.
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST_V6);
}

const refused = (message: string) => new ValidationError(message, { details: [{ path: 'url', message }] });

/** Checks `raw` and resolves its host; a ValidationError (400) says what is wrong. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('url must be an absolute https URL, e.g. https://hooks.example.com/pipeline-synthesis.');
  }
  if (url.username || url.password) throw refused('url must not carry a user name or password.');
  const local = policy.allowLocalHttp && LOCAL_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) {
    throw refused(
      policy.allowLocalHttp
        ? 'url must be https (the local stack also allows http://127.0.0.1 and http://localhost).'
        : 'url must be https.',
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const resolve = policy.resolve ?? ((name: string) => lookup(name, { all: true, verbatim: true }));
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = ipaddr.isValid(host)
      ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
      : await resolve(host);
  } catch {
    throw refused(`The host ${host} of url does not resolve; check the spelling.`);
  }
  if (addresses.length === 0) throw refused(`The host ${host} of url does not resolve; check the spelling.`);
  for (const { address } of addresses) {
    const allowed = isPublicAddress(address) || (local && unmapped(address)?.range() === 'loopback');
    if (!allowed) {
      throw refused(
        `url resolves to ${address}, a private, loopback, link-local or otherwise non-public address; webhooks are delivered to public addresses only.`,
      );
    }
  }
  const [first] = addresses as [{ address: string; family: number }];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
