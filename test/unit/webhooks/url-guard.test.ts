import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPublicAddress } from '../../../lambdas/webhooks/url-guard.ts';

const resolvingTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'the metadata address (link-local)'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'IPv6 link-local'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['not-an-ip', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '203.0.114.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  // IPv6 outside global unicast (2000::/3), and the special ranges inside it: each spelling a
  // resolver or a URL may give of an address that is not on the public internet.
  it.each([
    ['::7f00:1', 'IPv4-compatible loopback (::/96)'],
    ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
    ['0:0:0:0:0:0:7f00:1', 'IPv4-compatible loopback, written out'],
    ['::a9fe:a9fe', 'IPv4-compatible metadata address'],
    ['::169.254.169.254', 'IPv4-compatible metadata address, dotted'],
    ['::a00:1', 'IPv4-compatible private'],
    ['::8.8.8.8', 'IPv4-compatible public (deprecated: no route)'],
    ['::2', 'inside ::/96'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
    ['64:ff9b::7f00:1', 'NAT64 of a loopback (RFC 6052)'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64 (RFC 8215)'],
    ['100::1', 'discard (RFC 6666)'],
    ['fec0::1', 'deprecated site-local'],
    ['2002:7f00:1::1', '6to4 of a loopback'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['5f00::1', 'segment routing'],
    ['4000::1', 'outside 2000::/3'],
    ['e000::1', 'outside 2000::/3'],
    ['ff02::1', 'multicast'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['2a00:1450:4001:80e::200e', '2606:4700::6810:84e5', '2001:4860:4860::8888', '::ffff:1.1.1.1'])(
    'allows the global unicast address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('checkWebhookUrl', () => {
  const aws = { allowLocalHttp: false };

  it('accepts an https URL whose every address is public, and returns the address it checked', async () => {
    const target = await checkWebhookUrl('https://hooks.example.com/x', {
      ...aws,
      resolve: resolvingTo('8.8.4.4'),
    });
    expect(target).toMatchObject({ address: '8.8.4.4', family: 4 });
    expect(target.url.hostname).toBe('hooks.example.com');
  });

  it('refuses a name with any private address among its public ones', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', { ...aws, resolve: resolvingTo('8.8.4.4', '10.0.0.5') }),
    ).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('10.0.0.5') });
  });

  it.each([
    'http://hooks.example.com/x',
    'https://user:pw@hooks.example.com/x',
    'ftp://hooks.example.com/x',
    'not a url',
    'https://127.0.0.1/x',
    'https://[::ffff:7f00:1]/x',
    'http://localhost/x',
    'https://[::7f00:1]/x',
    'https://[::127.0.0.1]/x',
    'https://[::a9fe:a9fe]/x',
    'https://[::2]/x',
    'https://[0:0:0:0:0:0:7f00:1]/x',
    'https://[0000::7f00:0001]:8443/x',
    'https://[64:ff9b::a9fe:a9fe]/x',
    'https://[2002:a9fe:a9fe::]/x',
  ])('refuses %s on AWS', async (url) => {
    await expect(checkWebhookUrl(url, { ...aws, resolve: resolvingTo('8.8.4.4') })).rejects.toMatchObject({
      statusCode: 400,
    });
  });

  it.each(['::7f00:1', '::a9fe:a9fe', '::2', '64:ff9b::7f00:1'])(
    'refuses a name that resolves to %s',
    async (address) => {
      await expect(
        checkWebhookUrl('https://hooks.example.com/x', { ...aws, resolve: resolvingTo(address) }),
      ).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining(address) });
    },
  );

  it('refuses a name that does not resolve', async () => {
    await expect(
      checkWebhookUrl('https://nowhere.example.com/x', {
        ...aws,
        resolve: async () => {
          throw new Error('ENOTFOUND');
        },
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
  });

  it('allows http://127.0.0.1 and http://localhost only with the local stack policy', async () => {
    const local = { allowLocalHttp: true, resolve: resolvingTo('127.0.0.1') };
    await expect(checkWebhookUrl('http://127.0.0.1:9/x', local)).resolves.toMatchObject({
      address: '127.0.0.1',
    });
    await expect(checkWebhookUrl('http://localhost:9/x', local)).resolves.toMatchObject({
      address: '127.0.0.1',
    });
    await expect(checkWebhookUrl('http://10.0.0.1/x', local)).rejects.toMatchObject({ statusCode: 400 });
    await expect(
      checkWebhookUrl('https://internal.example.com/x', { ...local, resolve: resolvingTo('127.0.0.1') }),
    ).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});
