import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { postToTarget } from '../../../lambdas/webhooks/post.ts';

const seen: Array<{ host: string | undefined; body: string }> = [];
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    seen.push({ host: request.headers.host, body });
    if (request.url === '/hang') return; // never answers
    response.writeHead(request.url === '/gone' ? 410 : 200).end('ok');
  });
});
const listening = new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
);

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('postToTarget', () => {
  it('connects to the checked address, not to what the name would resolve to, keeping the Host', async () => {
    const port = await listening;
    // .invalid never resolves: the request can only reach the server through the pinned address.
    const target = {
      url: new URL(`http://hooks.invalid:${port}/ok`),
      address: '127.0.0.1',
      family: 4 as const,
    };
    expect(await postToTarget(target, { 'content-type': 'application/json' }, '{"a":1}')).toEqual({
      status: 200,
    });
    expect(seen.at(-1)).toEqual({ host: `hooks.invalid:${port}`, body: '{"a":1}' });
  });

  it('answers the status of a refusal, and an error for a receiver that does not answer in time', async () => {
    const port = await listening;
    const at = (path: string) => ({
      url: new URL(`http://hooks.invalid:${port}${path}`),
      address: '127.0.0.1',
      family: 4 as const,
    });
    expect(await postToTarget(at('/gone'), {}, '{}')).toEqual({ status: 410 });
    expect(await postToTarget(at('/hang'), {}, '{}', 200)).toEqual({
      error: 'no answer within 0.2 s',
      timedOut: true,
    });
  });
});
