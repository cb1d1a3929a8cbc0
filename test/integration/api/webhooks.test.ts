/*
 * Webhooks end to end on DynamoDB Local, in process: the operations, the events table's real
 * stream read by local/streams/, the local SQS queue, the deliverer, and a receiver on 127.0.0.1
 * that verifies our signatures with the `standardwebhooks` package.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TableNames } from '../../../local/dynamodb.ts';
import { type SqsEndpoint, startSqsEndpoint } from '../../../local/queue/endpoint.ts';
import { type EventSource, startEventSource } from '../../../local/queue/event-source.ts';
import { LocalQueue } from '../../../local/queue/queue.ts';
import { type StreamSource, startStreamSource } from '../../../local/streams/stream-source.ts';
import { waitFor } from '../../support/wait.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  invoke,
  loadHandlers,
  setUpApiEnvironment,
  sqsEvent,
} from './harness.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let db: DynamoDBDocumentClient;
let names: TableNames;
let admin: Caller;
let viewer: Caller;
let receiver: Server;
let base: string;
const received: Received[] = [];
/** Requests to /hang/…: accepted, never answered (destroyed at the end). */
const hanging: Array<{ path: string; response: import('node:http').ServerResponse }> = [];
let slowQueue: LocalQueue;
let sqs: SqsEndpoint;
let stream: StreamSource;
let source: EventSource;
// biome-ignore lint/suspicious/noExplicitAny: handlers of several shapes
let handlers: Record<string, any>;

const call = (entry: string, input: Parameters<typeof apiEvent>[0]) =>
  invoke(handlers[entry], apiEvent(input));
const createWebhook = (caller: Caller, body: object) =>
  call('create-webhook', { method: 'POST', resource: '/webhooks', body, principal: caller.principal });
const listWebhooks = (caller: Caller) =>
  call('list-webhooks', { method: 'GET', resource: '/webhooks', principal: caller.principal });
const deliveries = (caller: Caller, id: string) =>
  call('list-webhook-deliveries', {
    method: 'GET',
    resource: '/webhooks/{id}/deliveries',
    pathParameters: { id },
    principal: caller.principal,
  });

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body });
      if (request.url?.startsWith('/hang/')) {
        hanging.push({ path: request.url, response });
        return;
      }
      const status = Number(request.url?.split('/')[1]) || 200;
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const queue = new LocalQueue({
    name: 'webhook-deliveries',
    region: 'us-east-1',
    accountId: '000000000000',
  });
  // The slow lane's queue: deliveries move there only for a receiver silent for 1.5 s.
  slowQueue = new LocalQueue({
    name: 'webhook-slow-deliveries',
    region: 'us-east-1',
    accountId: '000000000000',
  });
  sqs = await startSqsEndpoint({ [queue.name]: queue, [slowQueue.name]: slowQueue });
  ({ db, names } = await setUpApiEnvironment({
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'),
    ALLOW_LOCAL_WEBHOOK_URLS: 'true',
    WEBHOOK_QUEUE_URL: sqs.queueUrl(queue.name),
    WEBHOOK_SLOW_QUEUE_URL: sqs.queueUrl(slowQueue.name),
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
  }));
  handlers = await loadHandlers([
    'create-webhook',
    'list-webhooks',
    'delete-webhook',
    'list-webhook-deliveries',
    'list-audit-events',
    'deliver-events',
    'deliver-webhooks',
  ]);
  admin = await createCaller(db, names, 'admin');
  viewer = await createCaller(db, names, 'viewer');
  const client = new DynamoDBClient({
    endpoint: inject('dynamodbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  stream = await startStreamSource({
    client,
    tableName: names.Events,
    batchSize: 100,
    region: 'us-east-1',
    invoke: (event) => handlers['deliver-events'](event),
    log: () => undefined,
  });
  source = startEventSource(queue, (event) => handlers['deliver-webhooks'](event), {
    batchSize: 10,
    functionName: 'deliver-webhooks',
    log: () => undefined,
  });
});

afterAll(async () => {
  for (const { response } of hanging) response.destroy();
  await stream?.stop();
  await source?.stop();
  await sqs?.stop();
  receiver?.close();
});

describe('webhooks', () => {
  it('creates a webhook, shows its secret once, and delivers its events signed per Standard Webhooks', async () => {
    const created = await createWebhook(admin, { url: `${base}/200/ok`, description: 'on-call' });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(created.body.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    const listed = await listWebhooks(admin);
    expect(listed.body.items).toEqual([
      {
        id: created.body.id,
        url: `${base}/200/ok`,
        eventTypes: expect.arrayContaining(['synthesis_run.generated', 'webhook.created', 'monitor.alerted']),
        allEventTypes: true,
        description: 'on-call',
        createdAt: created.body.createdAt,
        disabledAt: null,
        format: 'standard',
      },
    ]);
    // The secret is stored sealed, never as its text.
    const { Items = [] } = await new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }).send(new ScanCommand({ TableName: names.Data }));
    expect(JSON.stringify(Items)).not.toContain(created.body.secret.slice(6));

    // Its own webhook.created event reaches it.
    await waitFor(() => received.some((request) => request.path === '/200/ok'), 'the delivery');
    const delivery = received.find((request) => request.path === '/200/ok') as Received;
    const payload = new Webhook(created.body.secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    });
    expect(payload).toEqual({
      type: 'webhook.created',
      timestamp: created.body.createdAt,
      data: {
        teamId: admin.principal.teamId,
        webhookId: created.body.id,
        // The token is named as the API shows it: by its name.
        actor: {
          userId: admin.principal.userId,
          credential: 'api_token',
          tokenId: admin.principal.tokenId,
          name: expect.stringMatching(/^\S+@example\.test \(API token "bootstrap"\)$/),
        },
      },
    });
    expect(delivery.headers['content-type']).toBe('application/json');
    await waitFor(
      async () => (await deliveries(admin, created.body.id)).body.items.length > 0,
      'the delivery record',
    );
    expect((await deliveries(admin, created.body.id)).body.items[0]).toMatchObject({
      eventId: delivery.headers['webhook-id'],
      eventType: 'webhook.created',
      attempt: 1,
      status: 'delivered',
      responseStatus: 200,
      nextAttemptAt: null,
    });
  });

  it('records a failed attempt as pending with its next time, and disables a webhook answered 410', async () => {
    const failing = await createWebhook(admin, { url: `${base}/500/down`, eventTypes: ['webhook.created'] });
    await waitFor(
      async () => (await deliveries(admin, failing.body.id)).body.items.length > 0,
      'the failed attempt',
    );
    const [attempt] = (await deliveries(admin, failing.body.id)).body.items;
    expect(attempt).toMatchObject({ attempt: 1, status: 'pending', responseStatus: 500 });
    expect(Date.parse(attempt.nextAttemptAt) - Date.parse(attempt.attemptedAt)).toBeGreaterThanOrEqual(5000);

    const gone = await createWebhook(admin, { url: `${base}/410/gone`, eventTypes: ['webhook.created'] });
    await waitFor(
      async () =>
        (await listWebhooks(admin)).body.items.some(
          (webhook: { id: string; disabledAt: string | null }) =>
            webhook.id === gone.body.id && webhook.disabledAt,
        ),
      'the webhook disabled',
    );
  });

  it('sends nothing to a deleted webhook, even for a delivery already queued', async () => {
    const created = await createWebhook(admin, {
      url: `${base}/200/deleted`,
      eventTypes: ['pipeline.deleted'],
    });
    const removed = await call('delete-webhook', {
      method: 'DELETE',
      resource: '/webhooks/{id}',
      pathParameters: { id: created.body.id },
      principal: admin.principal,
    });
    expect(removed.status).toBe(204);
    const queued = JSON.stringify({
      teamId: admin.principal.teamId,
      webhookId: created.body.id,
      event: {
        id: 'evt_queued',
        type: 'pipeline.deleted',
        timestamp: new Date().toISOString(),
        data: {
          teamId: admin.principal.teamId,
          pipelineId: 'p1',
          actor: { userId: 'system', credential: 'system' },
        },
      },
    });
    const result = await handlers['deliver-webhooks'](sqsEvent([queued]) as SQSEvent);
    expect(result).toEqual({ batchItemFailures: [] });
    expect(received.some((request) => request.path === '/200/deleted')).toBe(false);
    expect(
      (
        await call('delete-webhook', {
          method: 'DELETE',
          resource: '/webhooks/{id}',
          pathParameters: { id: created.body.id },
          principal: admin.principal,
        })
      ).status,
    ).toBe(404);
  });

  it("moves a delivery its receiver leaves unanswered to the slow lane, and that receiver's next one without a POST", async () => {
    const created = await createWebhook(admin, {
      url: `${base}/hang/lanes`,
      eventTypes: ['pipeline.deleted'],
    });
    const queued = (id: string) =>
      JSON.stringify({
        teamId: admin.principal.teamId,
        webhookId: created.body.id,
        event: {
          id,
          type: 'pipeline.deleted',
          timestamp: new Date().toISOString(),
          data: {
            teamId: admin.principal.teamId,
            pipelineId: 'p1',
            actor: { userId: 'system', credential: 'system' },
          },
        },
      });

    // A second attempt (received twice) to a receiver that accepts the connection and never answers.
    const first = await handlers['deliver-webhooks'](sqsEvent([queued('evt_lane_1')], 2) as SQSEvent);
    const second = await handlers['deliver-webhooks'](sqsEvent([queued('evt_lane_2')]) as SQSEvent);
    const moved = slowQueue.receive(10).map((message) => JSON.parse(message.body));
    const log = await deliveries(admin, created.body.id);

    // Both messages are done in the fast lane and wait in the slow one, as the attempts they were.
    expect(first).toEqual({ batchItemFailures: [] });
    expect(second).toEqual({ batchItemFailures: [] });
    expect(moved.map((message) => [message.event.id, message.attemptsBefore])).toEqual([
      ['evt_lane_1', 1],
      ['evt_lane_2', 0],
    ]);
    // Only the first was POSTed: the receiver was known to be slow by the second.
    expect(hanging.filter((request) => request.path === '/hang/lanes')).toHaveLength(1);
    // No attempt is recorded yet: the slow lane records each once it has made it.
    expect(log.body.items).toEqual([]);
  });

  it('refuses bad webhooks with a 400 and stores nothing', async () => {
    const caller = await createCaller(db, names, 'admin');
    for (const body of [
      { url: 'http://example.com/hook' },
      { url: 'https://10.0.0.7/hook' },
      { url: 'https://169.254.169.254/latest' },
      { url: 'https://[::ffff:127.0.0.1]/hook' },
      { url: 'https://100.64.0.1/hook' },
      { url: 'not a url' },
      { url: `${base}/ok`, eventTypes: ['synthesis_run.exploded'] },
    ]) {
      expect((await createWebhook(caller, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await listWebhooks(caller)).body.items).toEqual([]);
    expect((await createWebhook(viewer, { url: `${base}/200/v` })).status).toBe(403);
  });

  it('shows a webhook URL whole to admins only: members and viewers see its query string redacted', async () => {
    const caller = await createCaller(db, names, 'admin');
    const secretUrl = `${base}/200/q?token=abc123&x=1`;
    expect((await createWebhook(caller, { url: secretUrl })).status).toBe(201);
    const as = (role: 'member' | 'viewer') => ({ ...caller, principal: { ...caller.principal, role } });

    expect((await listWebhooks(caller)).body.items[0].url).toBe(secretUrl);
    for (const role of ['member', 'viewer'] as const) {
      const shown = (await listWebhooks(as(role))).body.items[0].url as string;
      expect(shown).toBe(`${base}/200/q?redacted`);
      expect(shown).not.toMatch(/abc123/);
    }
  });

  it('allows at most 20 webhooks a team', async () => {
    const caller = await createCaller(db, names, 'admin');
    for (let index = 0; index < 20; index++) {
      expect(
        (await createWebhook(caller, { url: `${base}/200/n${index}`, eventTypes: ['pipeline.deleted'] }))
          .status,
      ).toBe(201);
    }
    const over = await createWebhook(caller, { url: `${base}/200/n20`, eventTypes: ['pipeline.deleted'] });
    expect(over).toMatchObject({ status: 400, body: { error: 'VALIDATION_ERROR' } });
    expect((await listWebhooks(caller)).body.items).toHaveLength(20);
  });
});

describe('GET /audit-events', () => {
  const audit = (caller: Caller, query: Record<string, string> = {}) =>
    call('list-audit-events', {
      method: 'GET',
      resource: '/audit-events',
      query,
      principal: caller.principal,
    });

  it("lists the team's events newest first with their actor, by type; viewers may not read it", async () => {
    const caller = await createCaller(db, names, 'admin');
    const first = await createWebhook(caller, { url: `${base}/200/a1`, eventTypes: ['pipeline.deleted'] });
    const second = await createWebhook(caller, { url: `${base}/200/a2`, eventTypes: ['pipeline.deleted'] });
    const page = await audit(caller, { type: 'webhook.created' });
    expect(page.status).toBe(200);
    expect(page.body.items.map((event: { data: { webhookId: string } }) => event.data.webhookId)).toEqual([
      second.body.id,
      first.body.id,
    ]);
    expect(page.body.items[0].data.actor).toEqual({
      userId: caller.principal.userId,
      credential: 'api_token',
      tokenId: caller.principal.tokenId,
      name: expect.stringMatching(/^\S+@example\.test \(API token "bootstrap"\)$/),
    });
    // The bootstrap's token creation is there too, by the system.
    const all = await audit(caller);
    expect(all.body.items.map((event: { type: string }) => event.type)).toContain('api_token.created');
    expect((await audit(caller, { type: 'nope' })).status).toBe(400);
    expect((await audit(viewer)).status).toBe(403);
  });
});
