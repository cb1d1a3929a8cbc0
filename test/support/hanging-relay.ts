/**
 * An API that goes silent: an HTTP server on 127.0.0.1 that relays its first `answered` requests
 * to `target` (the local stack) and then accepts every request and never answers, as an API
 * behind a stuck load balancer does. Its sockets are destroyed when it closes.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HangingRelay {
  url: string;
  /** The status relayed for each request, `hung` for those left unanswered. */
  seen: Array<number | 'hung'>;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks);
}

export async function startHangingRelay(target: string, answered: number): Promise<HangingRelay> {
  const seen: HangingRelay['seen'] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (request, response) => {
    if (seen.length >= answered) {
      seen.push('hung');
      return;
    }
    const index = seen.push(0) - 1;
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    const body = await bodyOf(request);
    const relayed = await fetch(`${target}${request.url ?? '/'}`, {
      method: request.method ?? 'GET',
      headers,
      ...(body ? { body } : {}),
    });
    seen[index] = relayed.status;
    const text = Buffer.from(await relayed.arrayBuffer());
    // fetch has decoded the body: its length and encoding are no longer the ones relayed.
    const answerHeaders = Object.fromEntries(relayed.headers);
    delete answerHeaders['content-encoding'];
    delete answerHeaders['content-length'];
    response.writeHead(relayed.status, answerHeaders);
    response.end(text);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
