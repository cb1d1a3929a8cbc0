/**
 * The first team of bench/otlp.ts sending the review's bombs in a loop, in a worker thread of its
 * own: an attacker's client is another machine's, so its 10 MB bodies' copies and collections are
 * not made on the event loop of the local stack's gateway (the bench's own process). Ends when
 * told, answering the statuses it got.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { reviewBombs } from '../test/support/otlp-bombs.ts';

const { url, token } = workerData as { url: string; token: string };
const bombs = reviewBombs();
let bombing = true;
parentPort?.on('message', () => {
  bombing = false;
});
parentPort?.postMessage({ ready: true });
const answers: number[] = [];
for (let at = 0; bombing; at++) {
  const bomb = bombs[at % bombs.length] ?? bombs[0];
  if (!bomb) break;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': bomb.contentType,
      ...(bomb.gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    body: bomb.body,
  });
  await response.arrayBuffer();
  answers.push(response.status);
  // Let the stop message in between two bombs.
  await new Promise((resolve) => setImmediate(resolve));
}
parentPort?.postMessage({ answers });
