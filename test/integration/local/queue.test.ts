/** The local SQS queue, its event source and its SQS endpoint, against what SQS and Lambda guarantee. */
import { createHash } from 'node:crypto';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { startSqsEndpoint } from '../../../local/queue/endpoint.ts';
import { type EventSource, startEventSource } from '../../../local/queue/event-source.ts';
import { LocalQueue } from '../../../local/queue/queue.ts';
import { deferred, waitFor } from '../../support/wait.ts';

// Fast timings, so redelivery happens within the test.
const VISIBILITY_TIMEOUT_MS = 80;
const POLL_INTERVAL_MS = 20;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function queue(name: string, options: Partial<ConstructorParameters<typeof LocalQueue>[0]> = {}): LocalQueue {
  return new LocalQueue({ name, visibilityTimeoutMs: VISIBILITY_TIMEOUT_MS, ...options });
}

/** Attaches a consumer that records every event it is invoked with. */
function consume(
  target: LocalQueue,
  respond: (event: SQSEvent, call: number) => Promise<SQSBatchResponse | undefined>,
  options: {
    batchSize?: number;
    maxConcurrency?: number;
    pollIntervalMs?: number;
    maxBatchingWindowSeconds?: number;
  } = {},
): { events: SQSEvent[]; log: string[]; consumer: EventSource } {
  const events: SQSEvent[] = [];
  const log: string[] = [];
  const invoke = async (event: SQSEvent) => {
    events.push(event);
    return respond(event, events.length);
  };
  const consumer = startEventSource(target, invoke, {
    batchSize: options.batchSize ?? 10,
    maxConcurrency: options.maxConcurrency ?? 1,
    pollIntervalMs: options.pollIntervalMs ?? POLL_INTERVAL_MS,
    functionName: 'consumer',
    log: (line) => log.push(line),
    ...(options.maxBatchingWindowSeconds
      ? { maxBatchingWindowSeconds: options.maxBatchingWindowSeconds }
      : {}),
  });
  cleanups.push(() => consumer.stop());
  return { events, log, consumer };
}

const records = (events: SQSEvent[]): SQSRecord[] => events.flatMap((event) => event.Records);
const bodies = (event: SQSEvent | undefined): string[] =>
  (event?.Records ?? []).map((record) => record.body).sort();

describe('LocalQueue', () => {
  it('invokes the consumer with an SQS event shaped like Lambda’s', async () => {
    const jobs = queue('jobs', { region: 'eu-west-1', accountId: '123456789012' });
    const { events } = consume(jobs, async () => undefined);

    const messageId = jobs.send('{"runId":"r1"}', {
      messageAttributes: { jobId: { DataType: 'String', StringValue: 'job-1' } },
    });
    await waitFor(() => events.length === 1, 'the delivery');

    const [record] = records(events);
    expect(record).toEqual({
      messageId,
      receiptHandle: expect.any(String),
      body: '{"runId":"r1"}',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d{13}$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
      },
      messageAttributes: {
        jobId: { stringValue: 'job-1', stringListValues: [], binaryListValues: [], dataType: 'String' },
      },
      md5OfBody: createHash('md5').update('{"runId":"r1"}').digest('hex'),
      md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/),
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:jobs',
      awsRegion: 'eu-west-1',
    });
  });

  it('wakes the poller on send instead of waiting for the next poll', async () => {
    const jobs = queue('jobs');
    // A poll interval far longer than the test's deadline: only the wake-up can deliver in time.
    const { events } = consume(jobs, async () => undefined, { pollIntervalMs: 600_000 });
    await new Promise((resolve) => setImmediate(resolve));

    jobs.send('now');
    await waitFor(() => events.length === 1, 'the delivery', 5_000);

    expect(bodies(events[0])).toEqual(['now']);
  });

  it('redelivers a message after the visibility timeout when the invocation fails', async () => {
    const jobs = queue('jobs');
    const { events, log } = consume(jobs, async (_, call) => {
      if (call === 1) throw new Error('worker crashed');
      return undefined;
    });

    const messageId = jobs.send('job');
    await waitFor(() => events.length === 2, 'the redelivery');
    await waitFor(() => jobs.counts().inFlight === 0, 'the delete');

    const [first, second] = records(events);
    expect(first?.messageId).toBe(messageId);
    expect(second?.messageId).toBe(messageId);
    expect([first?.attributes.ApproximateReceiveCount, second?.attributes.ApproximateReceiveCount]).toEqual([
      '1',
      '2',
    ]);
    expect(second?.receiptHandle).not.toBe(first?.receiptHandle);
    expect(log.join('\n')).toContain('worker crashed');
    expect(jobs.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('makes a received but undeleted message visible again after the visibility timeout', async () => {
    const jobs = queue('jobs');
    jobs.send('job');

    const [first] = jobs.receive(10);
    const hidden = jobs.receive(10);
    let again: ReturnType<LocalQueue['receive']> = [];
    await waitFor(() => {
      again = jobs.receive(10);
      return again.length > 0;
    }, 'the message to reappear');

    expect(hidden).toEqual([]);
    expect(again[0]?.messageId).toBe(first?.messageId);
    expect(again[0]?.receiveCount).toBe(2);
    expect(jobs.delete(first?.receiptHandle ?? '')).toBe(false);
    expect(jobs.delete(again[0]?.receiptHandle ?? '')).toBe(true);
  });

  it('moves a message to the dead-letter queue after maxReceiveCount failed receives', async () => {
    const deadLetters = queue('jobs-dlq');
    const jobs = queue('jobs', { deadLetterQueue: deadLetters, maxReceiveCount: 2 });
    const worker = consume(jobs, async () => {
      throw new Error('always fails');
    });
    const deadLetterHandler = consume(deadLetters, async () => undefined);

    const messageId = jobs.send('{"runId":"r1"}');
    await waitFor(() => deadLetterHandler.events.length === 1, 'the dead letter');

    const [deadLetter] = records(deadLetterHandler.events);
    expect(worker.events).toHaveLength(2);
    expect(deadLetter?.messageId).toBe(messageId);
    expect(deadLetter?.body).toBe('{"runId":"r1"}');
    expect(deadLetter?.eventSourceARN).toBe(deadLetters.arn);
    expect(deadLetter?.attributes.DeadLetterQueueSourceArn).toBe(jobs.arn);
    expect(jobs.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('honours partial batch failures: only the reported messages come back', async () => {
    const jobs = queue('jobs');
    const ids = new Map(['a', 'b', 'c'].map((body) => [body, jobs.send(body)]));
    const { events } = consume(jobs, async (event, call) =>
      call === 1
        ? {
            batchItemFailures: event.Records.filter((r) => r.body === 'b').map((r) => ({
              itemIdentifier: r.messageId,
            })),
          }
        : { batchItemFailures: [] },
    );

    await waitFor(() => events.length === 2, 'the retry of b');
    await waitFor(() => jobs.counts().inFlight === 0, 'the delete of b');

    expect(bodies(events[0])).toEqual(['a', 'b', 'c']);
    expect(records([events[1] ?? { Records: [] }]).map((r) => r.messageId)).toEqual([ids.get('b')]);
    expect(events[1]?.Records[0]?.attributes.ApproximateReceiveCount).toBe('2');
    expect(jobs.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it.each([
    [
      'an itemIdentifier that is not in the batch',
      { batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] },
    ],
    ['an empty itemIdentifier', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a failure without itemIdentifier', { batchItemFailures: [{ id: 'x' }] }],
    ['a response that is not an object', 'done'],
  ])('fails the whole batch on %s', async (_, response) => {
    const jobs = queue('jobs');
    for (const body of ['a', 'b']) jobs.send(body);
    const { events, log } = consume(jobs, async (_event, call) =>
      // A malformed response on purpose; Lambda only sees its JSON.
      call === 1 ? (response as unknown as SQSBatchResponse) : undefined,
    );

    await waitFor(() => events.length === 2, 'the retry');

    expect(bodies(events[1])).toEqual(['a', 'b']);
    expect(log.join('\n')).toMatch(/batch/);
  });

  it.each([
    ['nothing', undefined],
    ['an empty object', {}],
    ['an empty failure list', { batchItemFailures: [] }],
    ['a null failure list', { batchItemFailures: null }],
  ])('deletes the whole batch when the handler returns %s', async (_, response) => {
    const jobs = queue('jobs');
    for (const body of ['a', 'b']) jobs.send(body);
    const { events } = consume(jobs, async () => response as unknown as SQSBatchResponse);

    await waitFor(() => events.length === 1 && jobs.counts().inFlight === 0, 'the delete');

    expect(jobs.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('delivers batches of at most batchSize records', async () => {
    const jobs = queue('jobs');
    for (const body of ['1', '2', '3', '4', '5']) jobs.send(body);
    const { events } = consume(jobs, async () => undefined, { batchSize: 2 });

    await waitFor(() => records(events).length === 5, 'all five messages');

    expect(events.map((event) => event.Records.length)).toEqual([2, 2, 1]);
    expect(
      records(events)
        .map((record) => record.body)
        .sort(),
    ).toEqual(['1', '2', '3', '4', '5']);
  });

  it('with a batching window, gathers a burst into one batch of more than 10, or fewer once it is full', async () => {
    // The window must fit in the visibility timeout (Lambda requires as much).
    const checks = queue('checks', { visibilityTimeoutMs: 30_000 });
    const { events } = consume(checks, async () => undefined, { batchSize: 25, maxBatchingWindowSeconds: 1 });
    // A burst in steps, all within the window that the first message opens.
    for (let step = 0; step < 4; step++) {
      for (let i = 0; i < 5; i++) checks.send(`${step}-${i}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await waitFor(() => records(events).length === 20, 'the burst');
    expect(events.map((event) => event.Records.length)).toEqual([20]);

    for (let i = 0; i < 30; i++) checks.send(`full-${i}`);
    await waitFor(() => records(events).length === 50, 'the second burst');
    expect(events.map((event) => event.Records.length)).toEqual([20, 25, 5]);
    expect(() =>
      startEventSource(checks, async () => undefined, { batchSize: 11, functionName: 'no window' }),
    ).toThrow(RangeError);
  });

  it('holds a delayed message back until its delay has passed', async () => {
    const jobs = queue('jobs');
    const { events } = consume(jobs, async () => undefined);

    jobs.send('later', { delaySeconds: 1 });
    const countsRightAfterSend = jobs.counts();
    await waitFor(() => events.length === 1, 'the delayed delivery');

    expect(countsRightAfterSend).toEqual({ visible: 0, inFlight: 0, delayed: 1 });
    expect(bodies(events[0])).toEqual(['later']);
  });

  it('refuses what SQS refuses: an empty body, invalid characters, a delay over 900 s', () => {
    const jobs = queue('jobs');

    expect(() => jobs.send('')).toThrow(/empty/);
    expect(() => jobs.send('bell \u0007')).toThrow(/characters/);
    expect(() => jobs.send('x', { delaySeconds: 901 })).toThrow(/DelaySeconds/);
  });

  it('stop() waits for the batches in flight and stops polling', async () => {
    const jobs = queue('jobs');
    const release = deferred();
    let finished = false;
    const { events, consumer } = consume(jobs, async () => {
      await release.promise;
      finished = true;
      return undefined;
    });
    jobs.send('slow');
    await waitFor(() => events.length === 1, 'the invocation');

    const stopped = consumer.stop();
    release.resolve();
    await stopped;
    jobs.send('after stop');
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS * 3));

    expect(finished).toBe(true);
    expect(events).toHaveLength(1);
    expect(jobs.counts().visible).toBe(1);
  });
});

describe('LocalQueue fair queueing by message group', () => {
  // Long enough that a held invocation is never redelivered while the test holds it.
  const HELD_MS = 60_000;
  const sendBurst = (target: LocalQueue, group: string, count: number) =>
    Array.from({ length: count }, (_, index) => target.send(`${group}-${index}`, { messageGroupId: group }));

  it('hands a quiet group’s message out before a busy group’s backlog', () => {
    const jobs = queue('jobs', { visibilityTimeoutMs: HELD_MS });
    sendBurst(jobs, 'team-a', 40);
    const first = jobs.receive(5);
    const quiet = jobs.send('team-b-0', { messageGroupId: 'team-b' });

    const next = jobs.receive(5);

    expect(first.map((message) => message.body)).toEqual([
      'team-a-0',
      'team-a-1',
      'team-a-2',
      'team-a-3',
      'team-a-4',
    ]);
    expect(next[0]?.messageId).toBe(quiet);
    expect(next.map((message) => message.body)).toEqual([
      'team-b-0',
      'team-a-5',
      'team-a-6',
      'team-a-7',
      'team-a-8',
    ]);
    expect(next[0]?.record.attributes.MessageGroupId).toBe('team-b');
  });

  it('alternates between groups that have the same number in flight, oldest first within each', () => {
    const jobs = queue('jobs', { visibilityTimeoutMs: HELD_MS });
    sendBurst(jobs, 'team-a', 3);
    sendBurst(jobs, 'team-b', 3);
    jobs.send('ungrouped-0');

    const bodies = jobs.receive(10).map((message) => message.body);

    expect(bodies).toEqual([
      'team-a-0',
      'team-b-0',
      'ungrouped-0',
      'team-a-1',
      'team-b-1',
      'team-a-2',
      'team-b-2',
    ]);
  });

  it('starts another team’s single job before the rest of one team’s 40 slow jobs (batch 5, concurrency 5)', async () => {
    const jobs = queue('jobs', { visibilityTimeoutMs: HELD_MS });
    let holding = true;
    const gates: Array<() => void> = [];
    const { events } = consume(
      jobs,
      async () => {
        if (!holding) return undefined;
        const gate = deferred();
        gates.push(() => gate.resolve());
        await gate.promise;
        return undefined;
      },
      { batchSize: 5, maxConcurrency: 5 },
    );
    const releaseAll = () => {
      holding = false;
      for (const open of gates.splice(0)) open();
    };
    // Also on a failed assertion: stop() waits for the held invocations.
    cleanups.push(async () => releaseAll());
    sendBurst(jobs, 'team-a', 40);
    await waitFor(() => events.length === 5, 'five busy invocations');
    const startedBefore = records(events).length;

    jobs.send('team-b-0', { messageGroupId: 'team-b' });
    gates.shift()?.();
    await waitFor(() => events.length === 6, 'the sixth invocation');

    // The quiet team waited for one invocation of team-a to end, not for team-a's backlog.
    expect(startedBefore).toBeLessThan(40);
    expect(events[5]?.Records.map((record) => record.body)).toContain('team-b-0');
    releaseAll();
    await waitFor(() => jobs.counts().visible + jobs.counts().inFlight === 0, 'every job done');
    expect(records(events)).toHaveLength(41);
  });

  it('keeps at-least-once, partial failures and the dead-letter queue for grouped messages', async () => {
    const deadLetters = queue('jobs-dlq');
    const jobs = queue('jobs', { deadLetterQueue: deadLetters, maxReceiveCount: 2 });
    const { events } = consume(jobs, async (event) => ({
      batchItemFailures: event.Records.filter((record) => record.body === 'poison').map((record) => ({
        itemIdentifier: record.messageId,
      })),
    }));
    const deadLetterHandler = consume(deadLetters, async () => undefined);

    jobs.send('fine', { messageGroupId: 'team-a' });
    const poison = jobs.send('poison', { messageGroupId: 'team-b' });
    await waitFor(() => deadLetterHandler.events.length === 1, 'the dead letter');

    const delivered = records(events).map((record) => record.body);
    expect(delivered.filter((body) => body === 'fine')).toHaveLength(1);
    expect(delivered.filter((body) => body === 'poison')).toHaveLength(2);
    const [deadLetter] = records(deadLetterHandler.events);
    expect(deadLetter?.messageId).toBe(poison);
    expect(deadLetter?.attributes.MessageGroupId).toBe('team-b');
    expect(jobs.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('refuses a MessageGroupId SQS refuses: empty, over 128 characters, or with a space', () => {
    const jobs = queue('jobs');
    for (const messageGroupId of ['', 'x'.repeat(129), 'team a']) {
      expect(() => jobs.send('job', { messageGroupId })).toThrow(
        expect.objectContaining({ code: 'InvalidParameterValue' }),
      );
    }
    expect(jobs.counts().visible).toBe(0);
  });
});

describe('startSqsEndpoint', () => {
  async function endpointFor(...queues: LocalQueue[]) {
    const sqs = await startSqsEndpoint(Object.fromEntries(queues.map((q) => [q.name, q])));
    cleanups.push(() => sqs.stop());
    const client = new SQSClient({
      endpoint: sqs.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    cleanups.push(async () => client.destroy());
    return { sqs, client };
  }

  it('accepts SendMessage from the real SQSClient (MD5 verified) and delivers it', async () => {
    const jobs = queue('synthesis-jobs');
    const { events } = consume(jobs, async () => undefined);
    const { sqs, client } = await endpointFor(jobs);

    const sent = await client.send(
      new SendMessageCommand({
        QueueUrl: sqs.queueUrl('synthesis-jobs'),
        MessageBody: '{"jobId":"j1","note":"ünïcødé ✓"}',
        MessageAttributes: { jobId: { DataType: 'String', StringValue: 'j1' } },
      }),
    );
    await waitFor(() => events.length === 1, 'the delivery');

    const [record] = records(events);
    expect(record?.messageId).toBe(sent.MessageId);
    expect(record?.body).toBe('{"jobId":"j1","note":"ünïcødé ✓"}');
    expect(record?.messageAttributes.jobId?.stringValue).toBe('j1');
    expect(sent.MD5OfMessageAttributes).toBe(record?.md5OfMessageAttributes);
  });

  it('accepts SendMessage with a MessageGroupId and delivers it with the group', async () => {
    const jobs = queue('synthesis-jobs');
    const { events } = consume(jobs, async () => undefined);
    const { sqs, client } = await endpointFor(jobs);

    await client.send(
      new SendMessageCommand({
        QueueUrl: sqs.queueUrl('synthesis-jobs'),
        MessageBody: 'job',
        MessageGroupId: 'team-1',
      }),
    );
    await waitFor(() => events.length === 1, 'the delivery');

    expect(records(events)[0]?.attributes.MessageGroupId).toBe('team-1');
  });

  it('accepts ChangeMessageVisibility: a failed job comes back after the seconds it was given', async () => {
    const jobs = queue('synthesis-jobs', { visibilityTimeoutMs: 60_000 });
    const { sqs, client } = await endpointFor(jobs);
    jobs.send('retry me');
    const [first] = jobs.receive(1);

    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: sqs.queueUrl('synthesis-jobs'),
        ReceiptHandle: first?.receiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const [again] = jobs.receive(1);

    expect(again?.body).toBe('retry me');
    expect(again?.receiveCount).toBe(2);
    // The first receipt handle is stale now, as SQS says.
    await expect(
      client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: sqs.queueUrl('synthesis-jobs'),
          ReceiptHandle: first?.receiptHandle,
          VisibilityTimeout: 5,
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    await expect(
      client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: sqs.queueUrl('synthesis-jobs'),
          ReceiptHandle: again?.receiptHandle,
          VisibilityTimeout: 43_201,
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidParameterValue' });
  });

  it('answers QueueDoesNotExist for an unknown queue', async () => {
    const jobs = queue('synthesis-jobs');
    const { sqs, client } = await endpointFor(jobs);

    await expect(
      client.send(
        new SendMessageCommand({ QueueUrl: `${sqs.endpoint}/000000000000/nope`, MessageBody: 'x' }),
      ),
    ).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
  });

  it('answers an unsupported operation with an SQS JSON error', async () => {
    const jobs = queue('synthesis-jobs');
    const { sqs } = await endpointFor(jobs);

    const response = await fetch(sqs.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.PurgeQueue' },
      body: JSON.stringify({ QueueUrl: sqs.queueUrl('synthesis-jobs') }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      __type: 'com.amazonaws.sqs#UnsupportedOperation',
      message: expect.stringContaining('AmazonSQS.PurgeQueue'),
    });
  });
});
