/**
 * Requests Node's HTTP parser cannot read, sent byte for byte: the local gateway answers each in
 * its JSON `{error, message}` with its own answers' headers, never a bare status line.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalGateway, startLocalGateway } from '../../../local/gateway/server.ts';

/** Writes `text` to the gateway's socket and reads everything until it closes: status, headers, body. */
function exchange(port: number, text: string) {
  return new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
    });
  });
}

describe('the local gateway, to requests it cannot read', () => {
  let gateway: LocalGateway;
  const invoked: string[] = [];

  beforeAll(async () => {
    gateway = await startLocalGateway({
      port: 0,
      routes: [{ method: 'GET', path: '/items/{itemId}', entry: 'echo', authorized: false }],
      authorizerEntry: 'authorize',
      invoke: async (entry) => {
        invoked.push(entry);
        return { statusCode: 200, body: '{}' };
      },
      // A second for the body to arrive, so the test does not wait Node's 300 s.
      requestTimeoutMs: 1_000,
      quiet: true,
      log: () => {},
    });
  });
  afterAll(() => gateway.stop());

  it('answers a control character in a header with a 400 JSON body', async () => {
    const answer = await exchange(
      gateway.port,
      'GET /items/a HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n',
    );

    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.headers).toContain('x-content-type-options: nosniff');
    expect(JSON.parse(answer.body)).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.stringContaining('control character'),
    });
    expect(invoked).toEqual([]);
  });

  it('answers a GET whose Content-Length promises a body that never comes with a 408 JSON body', async () => {
    const answer = await exchange(
      gateway.port,
      'GET /items/a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n',
    );

    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'REQUEST_TIMEOUT',
      message: expect.stringContaining('Content-Length'),
    });
    expect(invoked).toEqual([]);
  });
});
