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
  ])('refuses %s on AWS', async (url) => {
    await expect(checkWebhookUrl(url, { ...aws, resolve: resolvingTo('8.8.4.4') })).rejects.toMatchObject({
      statusCode: 400,
    });
  });

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
