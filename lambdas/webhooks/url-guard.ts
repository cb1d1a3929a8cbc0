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

/** Whether an address is one a webhook may reach: global unicast only (after unmapping IPv4-in-IPv6). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns ::ffff:a.b.c.d into a.b.c.d, so a mapped private address is seen as private.
  const parsed = ipaddr.process(address);
  // Every named range (loopback, private, linkLocal with 169.254.169.254, carrierGradeNat,
  // uniqueLocal, unspecified, multicast, reserved, 6to4, teredo…) is refused; only 'unicast' passes.
  return parsed.range() === 'unicast';
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
    const allowed = isPublicAddress(address) || (local && ipaddr.process(address).range() === 'loopback');
    if (!allowed) {
      throw refused(
        `url resolves to ${address}, a private, loopback, link-local or otherwise non-public address; webhooks are delivered to public addresses only.`,
      );
    }
  }
  const [first] = addresses as [{ address: string; family: number }];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
