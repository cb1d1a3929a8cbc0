/*
 * One delivery's HTTP POST, connected to the address the URL guard checked (a `lookup` that
 * answers with it: no second DNS lookup), the host name kept for Host and TLS SNI; a 10 s budget
 * for the whole exchange, and a bounded read of the answer, which is discarded.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from './url-guard.ts';

/** A 2xx within this is delivered; anything slower counts as failed (and is retried). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** `timedOut`: no answer within the budget (the connection may still have been made and the body sent). */
export type PostResult = { status: number } | { error: string; timedOut?: true };

/** POSTs `body` with `headers` to the checked target; never throws. */
export function postToTarget(
  target: CheckedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<PostResult> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (typeof options === 'object' && options?.all) {
      (callback as unknown as (error: null, addresses: Array<{ address: string; family: number }>) => void)(
        null,
        [{ address: target.address, family: target.family }],
      );
      return;
    }
    callback(null, target.address, target.family);
  };
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = send(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        // No redirects are followed (node:http never does): a 3xx is a failed delivery.
      },
      (res) => {
        // The answer's body is read (so the socket is freed) and dropped; the status is what counts.
        res.on('data', () => undefined);
        res.on('end', () => finish({ status: res.statusCode ?? 0 }));
        res.on('error', (error) => finish({ error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${timeoutMs / 1000} s`, timedOut: true });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish({ error: error.message }));
    req.end(body);
  });
}
