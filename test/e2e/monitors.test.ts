/**
 * Monitors on the local stack: a failure-rate monitor goes to alert when failures are recorded and
 * back to ok when healthy executions dilute them, judged by the scheduled judge (every minute by
 * default; here every second), and both changes reach receivers on 127.0.0.1 through the outbox:
 * signed Standard Webhooks to one, Slack messages (unsigned) to another. Another team's token is
 * refused on every monitor endpoint.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONITOR_JUDGE } from '../../lambdas/functions.ts';
import { DEMO_SLOTS } from '../../local/seed.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { waitFor } from '../support/wait.ts';

let stack: LocalStack;
const receivers: Server[] = [];

beforeAll(async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'pipeline-synthesis-monitors-'));
  stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir,
    scheduleEveryMs: { [MONITOR_JUDGE.entry]: 1_000 },
  });
}, 120_000);

afterAll(async () => {
  for (const receiver of receivers) receiver.close();
  await stack?.stop();
});

/** A JSON call with the token of seeded team `team` (0 or 1). */
function apiAs(team: number) {
  return async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${stack.teams[team]?.apiToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const answer: any = await response.json().catch(() => null);
    return { status: response.status, body: answer };
  };
}

/** A receiver on 127.0.0.1 that keeps every POST. */
async function receiver() {
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

const MONITOR_EVENTS = ['monitor.alerted', 'monitor.resolved', 'monitor.no_data'];

describe('monitors on the local stack', { timeout: 150_000 }, () => {
  it('alert on failures and resolve, both changes delivered signed to a webhook and as Slack messages', async () => {
    const api = apiAs(0);
    const pipeline = (await api('POST', '/pipelines', { name: 'monitored', slots: DEMO_SLOTS })).body;
    const standard = await receiver();
    const slack = await receiver();
    const hook = await api('POST', '/webhooks', { url: standard.url, eventTypes: MONITOR_EVENTS });
    expect(hook.status).toBe(201);
    expect(hook.body.format).toBe('standard');
    const slackHook = await api('POST', '/webhooks', {
      url: slack.url,
      eventTypes: MONITOR_EVENTS,
      format: 'slack',
    });
    expect(slackHook.body.format).toBe('slack');

    const created = await api('POST', `/pipelines/${pipeline.id}/monitors`, {
      name: 'Failures over half',
      metric: 'failure_rate',
      comparator: 'above',
      threshold: 0.5,
      windowMinutes: 5,
      minExecutions: 5,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ state: 'no_data', lastValue: null, minExecutions: 5 });
    const monitorPath = `/pipelines/${pipeline.id}/monitors/${created.body.id}`;

    const record = (count: number, status: 'failed' | 'succeeded') =>
      api('POST', `/pipelines/${pipeline.id}/executions`, {
        executions: Array.from({ length: count }, () => ({
          configurationId: pipeline.activeConfigurationId,
          status,
          durationMs: 120,
        })),
      });
    expect((await record(10, 'failed')).status).toBe(201);
    await waitFor(
      async () => (await api('GET', monitorPath)).body?.state === 'alert',
      'the monitor to alert',
      60_000,
      200,
    );
    expect((await api('GET', monitorPath)).body).toMatchObject({ state: 'alert', lastValue: 1 });

    expect((await record(40, 'succeeded')).status).toBe(201);
    await waitFor(
      async () => (await api('GET', monitorPath)).body?.state === 'ok',
      'the monitor to resolve',
      60_000,
      200,
    );
    expect((await api('GET', monitorPath)).body).toMatchObject({ state: 'ok', lastValue: 0.2 });

    await waitFor(
      () => standard.received.length >= 2 && slack.received.length >= 2,
      'both deliveries',
      60_000,
      50,
    );
    const verified = standard.received.map(
      ({ headers, body }) =>
        new Webhook(hook.body.secret).verify(body, {
          'webhook-id': String(headers['webhook-id']),
          'webhook-timestamp': String(headers['webhook-timestamp']),
          'webhook-signature': String(headers['webhook-signature']),
        }) as { type: string; data: Record<string, unknown> },
    );
    expect(verified.map((event) => event.type)).toEqual(['monitor.alerted', 'monitor.resolved']);
    expect(verified[0]?.data).toMatchObject({
      pipelineId: pipeline.id,
      monitorId: created.body.id,
      status: 'alert',
      previousStatus: 'no_data',
      value: 1,
      monitor: { name: 'Failures over half', metric: 'failure_rate', threshold: 0.5 },
      link: `${stack.apiUrl}/app/pipelines/${pipeline.id}#monitors`,
      actor: { userId: 'system', credential: 'system' },
    });
    expect(verified[1]?.data).toMatchObject({ status: 'ok', previousStatus: 'alert', value: 0.2 });

    // Slack's body: {text, blocks}, the link as a button, and no signature (the URL is the secret).
    const messages = slack.received.map(
      ({ body }) => JSON.parse(body) as { text: string; blocks: unknown[] },
    );
    expect(messages[0]?.text).toContain('Alert: monitor "Failures over half"');
    expect(messages[1]?.text).toContain('Resolved: monitor "Failures over half"');
    expect(JSON.stringify(messages[0]?.blocks)).toContain(`/app/pipelines/${pipeline.id}#monitors`);
    for (const { headers } of slack.received) expect(headers['webhook-signature']).toBeUndefined();

    // The audit log holds both changes.
    const audit = await api('GET', `/audit-events?pipelineId=${pipeline.id}&type=monitor.alerted`);
    expect(audit.body.items).toHaveLength(1);
  });

  it("refuses another team's token on every monitor endpoint, changes nothing, and goes with its pipeline", async () => {
    const api = apiAs(0);
    const other = apiAs(1);
    const pipeline = (await api('POST', '/pipelines', { name: 'private', slots: DEMO_SLOTS })).body;
    const body = {
      name: 'Slow',
      metric: 'duration_p95',
      comparator: 'above',
      threshold: 1000,
      windowMinutes: 10,
    };
    const monitor = (await api('POST', `/pipelines/${pipeline.id}/monitors`, body)).body;
    const base = `/pipelines/${pipeline.id}/monitors`;
    const answers = [
      await other('POST', base, body),
      await other('GET', base),
      await other('GET', `${base}/${monitor.id}`),
      await other('PATCH', `${base}/${monitor.id}`, { threshold: 1 }),
      await other('DELETE', `${base}/${monitor.id}`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ error: 'FORBIDDEN', message: expect.any(String) });
    }
    expect((await api('GET', `${base}/${monitor.id}`)).body.threshold).toBe(1000);
    expect((await api('GET', base)).body.items).toHaveLength(1);

    // The pipeline's deletion removes its monitors (and their count) with it.
    const deleted = await api('DELETE', `/pipelines/${pipeline.id}`);
    expect(deleted.status).toBe(202);
    await waitFor(
      async () => (await api('GET', `/deletions/${deleted.body.id}`)).body.status === 'completed',
      'the deletion to complete',
      60_000,
      200,
    );
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: stack.dynamodbEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: stack.tables.Data,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `PIPELINE#${pipeline.id}`, ':prefix': 'MONITOR' },
      }),
    );
    expect(Items).toEqual([]);
  });
});
