/*
 * Webhook lanes on the local stack (the real stream, queues, deliverers and DynamoDB Local): one
 * team's 16 receivers accept the connection and never answer, with more deliveries queued for them
 * than the fast lane's invocations hold at once; another team's delivery still arrives while they
 * hang, before any of their POSTs has used up its 10 s (none is recorded as timed out), because the
 * fast lane gives up on a silent receiver after its short budget and moves it to the slow lane.
 * Order only; how long it takes is the `webhooks` bench's.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WEBHOOK_DELIVERER } from '../../lambdas/functions.ts';
import { DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

const HUNG_RECEIVERS = 16;
const { batchSize, maxConcurrency } = WEBHOOK_DELIVERER.trigger;
/** More deliveries for the hung receivers than the fast lane's invocations hold at once. */
const BUSY_CHANGES = Math.ceil((batchSize * maxConcurrency * 1.25) / HUNG_RECEIVERS);

interface HungRequest {
  path: string;
  webhookId: string;
  response: ServerResponse;
}

let stack: LocalStack | undefined;
const hung: HungRequest[] = [];
const receiver = createServer((request, response) => {
  request.resume();
  const webhookId = String(request.headers['webhook-id']);
  if (request.url?.startsWith('/hang/')) {
    hung.push({ path: request.url, webhookId, response });
    return;
  }
  request.on('end', () => {
    arrivals.push({ webhookId, openHung: hung.filter((one) => !one.response.socket?.destroyed).length });
    response.writeHead(204).end();
  });
});
const arrivals: Array<{ webhookId: string; openHung: number }> = [];

afterAll(async () => {
  for (const one of hung) one.response.destroy();
  await stack?.stop();
  receiver.close();
}, 60_000);

describe('webhook deliveries of a team whose receivers hang', () => {
  it("let another team's delivery arrive while they hang, before any of their POSTs times out", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    stack = await startLocalStack({
      port: 0,
      quiet: true,
      stateDir: await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-webhook-lanes-')),
      log: () => undefined,
      limits: { ...DEFAULT_LIMITS, requestsPerSecondPerCredential: 1_000, burstPerCredential: 1_000 },
    });
    const [busy, quiet] = stack.teams;
    if (!busy || !quiet) throw new Error('two seeded teams expected');
    const api = async (token: string, method: string, route: string, body?: unknown) => {
      const response = await fetch(`${stack?.apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (response.status >= 400) throw new Error(`${method} ${route}: ${response.status}`);
      // biome-ignore lint/suspicious/noExplicitAny: fields are asserted one by one
      return (await response.json()) as any;
    };
    const eventTypes = ['team_settings.updated'];
    const hungWebhooks: string[] = [];
    for (let index = 0; index < HUNG_RECEIVERS; index++) {
      const created = await api(busy.apiToken, 'POST', '/webhooks', {
        url: `${base}/hang/${index}`,
        eventTypes,
      });
      hungWebhooks.push(created.id);
    }
    await api(quiet.apiToken, 'POST', '/webhooks', { url: `${base}/quiet`, eventTypes });
    const change = (team: typeof busy, days: number) =>
      api(team.apiToken, 'PATCH', `/teams/${team.teamId}/settings`, {
        signalRetentionDays: days,
        executionRetentionDays: days,
      });

    // Arrange: every hung receiver holds an unanswered POST, and more are queued behind them.
    for (let index = 0; index < BUSY_CHANGES; index++) await change(busy, 400 + index);
    await waitFor(
      () => new Set(hung.map((one) => one.path)).size === HUNG_RECEIVERS,
      'a POST held by each hung receiver',
      60_000,
    );

    // Act: the other team changes its settings once.
    await change(quiet, 500);
    await waitFor(() => arrivals.length > 0, "the other team's delivery", 60_000);
    const busyDeliveries = (
      await Promise.all(
        hungWebhooks.map((id) => api(busy.apiToken, 'GET', `/webhooks/${id}/deliveries?limit=100`)),
      )
    ).flatMap((page) => page.items as Array<{ status: string; error?: string | null; attempt: number }>);

    // Assert: it arrived while the hung receivers still held POSTs, none of which had timed out…
    expect(arrivals[0]?.openHung).toBeGreaterThan(0);
    expect(busyDeliveries.filter((one) => one.error === 'timeout: no answer in time')).toEqual([]);
    // …because the fast lane gave up on them early: no attempt of theirs was made in full yet.
    expect(busyDeliveries.filter((one) => one.status !== 'pending')).toEqual([]);
    // The slow lane sends a moved delivery again, with the same webhook-id, to the same receiver.
    await waitFor(
      () => {
        const seen = new Set<string>();
        return hung.some((one) => seen.size === seen.add(`${one.path} ${one.webhookId}`).size);
      },
      'a moved delivery sent again by the slow lane',
      60_000,
    );
  }, 240_000);
});
