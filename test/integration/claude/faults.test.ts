import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SynthesisEngine } from '../../../lambdas/core/ports/synthesis.ts';
import { makeGenerateRun } from '../../../lambdas/core/use-cases/generation.ts';
import { MAX_RECEIVE_COUNT, WORKER_TIMEOUT_SECONDS } from '../../../lambdas/functions.ts';
import { nanoidGenerator } from '../../../lambdas/wiring/clock.ts';
import { isTransientFault } from '../../../lambdas/wiring/faults.ts';
import {
  type AnthropicFake,
  errorReply,
  overloaded,
  startAnthropicFake,
  toolReply,
} from '../../support/anthropic-fake.ts';
import { capturedOutput } from '../../support/captured-output.ts';
import { ANTHROPIC_KEY_PREFIX } from '../../support/fake-secrets.ts';
import {
  lambdaContext,
  type SqsLambda,
  setUpApiEnvironment,
  sqsEvent,
  TEST_QUEUE_URL,
} from '../api/harness.ts';
import { type ClaudeTestBed, goodDraft, seedPendingRun, testBed } from './fixtures.ts';

/**
 * The worker's fault handling end to end: the real handler module on DynamoDB Local, claude-v1
 * against the fake Messages API (every request counted), SQS mocked. A permanent fault fails the
 * run after one model call; a transient one is retried after seconds; every failed record is
 * logged once with the ids a person needs and counted for the alarm.
 */

const sqs = mockClient(SQSClient);
let fake: AnthropicFake;
let bed: ClaudeTestBed;
let worker: SqsLambda;
let deadLetters: SqsLambda;
const output = capturedOutput();

beforeAll(async () => {
  fake = await startAnthropicFake();
  const { db, names } = await setUpApiEnvironment({
    ANTHROPIC_API_KEY: `${ANTHROPIC_KEY_PREFIX}faults-test-0000000000`,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MAX_RETRIES: '0',
    ANTHROPIC_TIME_BUDGET_MS: '5000',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_METRICS_DISABLED: 'false',
  });
  bed = testBed(db, names);
  worker = (await import('../../../lambdas/handlers/process-synthesis-jobs.ts')).handler as SqsLambda;
  deadLetters = (await import('../../../lambdas/handlers/fail-dead-synthesis-jobs.ts')).handler as SqsLambda;
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  sqs.reset();
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
  // Powertools writes WARN and ERROR lines to stderr, the rest and EMF metrics to stdout.
  output.start();
});
afterEach(() => output.stop());

/** The JSON lines written: Powertools log lines and EMF metric sets. */
const jsonLines = () => output.jsonLines();
const errorLines = () => jsonLines().filter((line) => line.level === 'ERROR');
const metricCount = (name: string) =>
  jsonLines()
    .filter((line) =>
      (
        line._aws as { CloudWatchMetrics?: Array<{ Metrics: Array<{ Name: string }> }> } | undefined
      )?.CloudWatchMetrics?.[0]?.Metrics.some((metric) => metric.Name === name),
    )
    .reduce((sum, line) => sum + Number(line[name]), 0);

const jobOf = (run: { id: string; jobId: string }) => JSON.stringify({ runId: run.id, jobId: run.jobId });

describe('a permanent fault', () => {
  it('fails the run after exactly one model call, deletes the message and logs one ERROR line with the ids', async () => {
    const { run } = await seedPendingRun(bed);
    fake.script(errorReply(400, 'invalid_request_error', 'max_tokens: too large'), toolReply(goodDraft()));
    const event = sqsEvent([jobOf(run)]);

    const result = await worker(event, lambdaContext());

    expect(result.batchItemFailures).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
    expect(await bed.runs.get(run.id)).toMatchObject({
      status: 'failed',
      errorMessage: 'The model API refused the request (HTTP 400: max_tokens: too large).',
    });
    const errors = errorLines();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      message: 'synthesis run failed',
      runId: run.id,
      jobId: run.jobId,
      pipelineId: run.pipelineId,
      synthesisHandler: 'claude-v1',
      receiveCount: 1,
      errorClass: 'SynthesisFailure',
      errorMessage: expect.stringContaining('HTTP 400'),
    });
    expect(metricCount('SynthesisJobErrors')).toBe(1);
    expect(metricCount('RunsFailed')).toBe(1);
  });

  it('fails a result too large to store at once, naming the limit, without generating again', async () => {
    const { run, configuration } = await seedPendingRun(bed);
    let calls = 0;
    // Settings within their 16 KB limit each, but the whole configuration over DynamoDB's 400 KB.
    const oversized: SynthesisEngine = {
      name: 'claude-v1',
      generate: async () => {
        calls += 1;
        return {
          diagnosis: { summary: 's', findings: [] },
          // A change, so that the proposed configuration is stored (a run changing nothing stores none).
          changes: [
            { id: '1', slotId: 'slot-0', description: 'd', rationale: 'r', findingIds: [], patch: {} },
          ],
          structuredWarnings: [],
          confidence: 'low',
          analyzedSignalIds: [],
          analyzedExecutionIds: [],
          proposedSlots: Array.from({ length: 40 }, (_, index) => ({
            id: `slot-${index}`,
            name: `Slot ${index}`,
            kind: 'prompt',
            settings: { template: 'x'.repeat(15_000) },
          })),
        };
      },
    };
    const generate = makeGenerateRun({
      ...bed,
      engines: { 'claude-v1': oversized },
      clock: { now: () => new Date() },
      ids: nanoidGenerator,
      leaseMs: 120_000,
      isTransient: isTransientFault,
    });

    const outcome = await generate({ runId: run.id, jobId: run.jobId });

    expect(outcome.outcome).toBe('failed');
    expect(calls).toBe(1);
    const failed = await bed.runs.get(run.id);
    expect(failed?.status).toBe('failed');
    expect(failed?.errorMessage).toMatch(/too large to store.*400 KB/);
    expect(configuration.version).toBe(1);
  });
});

describe('a transient fault', () => {
  it('is retried after seconds, not the visibility timeout, and the next delivery generates the run', async () => {
    const { run } = await seedPendingRun(bed);
    fake.script(overloaded(), toolReply(goodDraft()));
    const first = sqsEvent([jobOf(run)], 1);

    const firstResult = await worker(first, lambdaContext());

    const messageId = first.Records[0]?.messageId;
    expect(firstResult.batchItemFailures).toEqual([{ itemIdentifier: messageId }]);
    const [change] = sqs.commandCalls(ChangeMessageVisibilityCommand).map((call) => call.args[0].input);
    expect(change).toMatchObject({
      QueueUrl: TEST_QUEUE_URL,
      ReceiptHandle: first.Records[0]?.receiptHandle,
    });
    expect(change?.VisibilityTimeout).toBeGreaterThanOrEqual(1);
    expect(change?.VisibilityTimeout).toBeLessThanOrEqual(10);
    expect(await bed.runs.get(run.id)).toMatchObject({
      status: 'pending',
      retryReason: 'The model API was overloaded (HTTP 529) on 1 attempt of the request.',
    });
    expect(errorLines()).toEqual([
      expect.objectContaining({
        message: 'synthesis job failed; it will be retried',
        runId: run.id,
        jobId: run.jobId,
        pipelineId: run.pipelineId,
        synthesisHandler: 'claude-v1',
        receiveCount: 1,
        retryInSeconds: change?.VisibilityTimeout,
        errorClass: 'TransientSynthesisError',
      }),
    ]);
    expect(metricCount('SynthesisJobErrors')).toBe(1);

    // The redelivery comes back within seconds, long before the first attempt's lease would end:
    // that attempt released the run, so the retry claims it at once.
    const second = await worker(sqsEvent([jobOf(run)], 2), lambdaContext());

    expect(second.batchItemFailures).toEqual([]);
    expect((await bed.runs.get(run.id))?.status).toBe('generated');
    expect(fake.requests).toHaveLength(2);
  });

  it('backs off longer with every receive, and the DLQ handler fails the run saying why', async () => {
    const { run } = await seedPendingRun(bed);
    const waits: number[] = [];
    for (let receive = 1; receive <= MAX_RECEIVE_COUNT; receive++) {
      fake.script(overloaded());
      sqs.reset();
      sqs.on(ChangeMessageVisibilityCommand).resolves({});
      await worker(sqsEvent([jobOf(run)], receive), lambdaContext());
      waits.push(
        Number(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input.VisibilityTimeout),
      );
    }
    await deadLetters(sqsEvent([jobOf(run)], MAX_RECEIVE_COUNT + 1), lambdaContext());

    for (let index = 1; index < waits.length; index++) {
      expect(waits[index], `wait ${index + 1}`).toBeGreaterThan(waits[index - 1] ?? 0);
    }
    expect(Math.max(...waits)).toBeLessThanOrEqual(300);
    expect(fake.requests).toHaveLength(MAX_RECEIVE_COUNT);
    expect(await bed.runs.get(run.id)).toMatchObject({
      status: 'failed',
      errorMessage: `Generation did not succeed in ${MAX_RECEIVE_COUNT} attempts and the job was moved to the dead-letter queue. The last attempt failed because: The model API was overloaded (HTTP 529) on 1 attempt of the request. Start a new run.`,
    });
  });
});

describe('leases', () => {
  it('retries, after the lease runs out, a delivery that finds the run held by another live invocation', async () => {
    const { run } = await seedPendingRun(bed);
    const now = new Date();
    await bed.runs.claim(run.id, now.toISOString(), new Date(now.getTime() - 120_000).toISOString());
    const event = sqsEvent([jobOf(run)], 2);

    const result = await worker(event, lambdaContext());

    expect(result.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
    const wait = Number(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input.VisibilityTimeout);
    expect(wait).toBeGreaterThan(WORKER_TIMEOUT_SECONDS - 10);
    expect(wait).toBeLessThanOrEqual(WORKER_TIMEOUT_SECONDS + 2);
    expect(fake.requests).toHaveLength(0);
    expect((await bed.runs.get(run.id))?.status).toBe('generating');
  });

  it('re-claims the run of a worker that died after its claim, once the lease ran out, and completes it', async () => {
    const { run } = await seedPendingRun(bed, 'heuristic-v1');
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const clock = { now: () => new Date(now) };
    const generate = makeGenerateRun({
      ...bed,
      engines: {
        'heuristic-v1': (await import('../../../lambdas/synthesis/heuristic/engine.ts')).heuristicV1,
      },
      clock,
      ids: nanoidGenerator,
      leaseMs: WORKER_TIMEOUT_SECONDS * 1000,
      isTransient: isTransientFault,
    });
    // The first invocation claims the run and dies (its Lambda timed out) before completing it.
    await bed.runs.claim(run.id, new Date(now).toISOString(), new Date(now - 120_000).toISOString());

    now += 30_000;
    const early = await generate({ runId: run.id, jobId: run.jobId });
    now += WORKER_TIMEOUT_SECONDS * 1000;
    const late = await generate({ runId: run.id, jobId: run.jobId });

    expect(early).toMatchObject({ outcome: 'retry', retryAfterSeconds: WORKER_TIMEOUT_SECONDS - 30 + 1 });
    expect(late.outcome).toBe('generated');
    expect(await bed.runs.get(run.id)).toMatchObject({
      status: 'generated',
      generationStartedAt: new Date(now).toISOString(),
    });
  });
});

describe('an engine that throws something unexpected', () => {
  it('fails the run at once (a retry would fail the same way) with a message a user can act on', async () => {
    const { run } = await seedPendingRun(bed);
    const broken: SynthesisEngine = {
      name: 'claude-v1',
      generate: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'slots')");
      },
    };
    const generate = makeGenerateRun({
      ...bed,
      engines: { 'claude-v1': broken },
      clock: { now: () => new Date() },
      ids: nanoidGenerator,
      leaseMs: 120_000,
      isTransient: isTransientFault,
    });

    const outcome = await generate({ runId: run.id, jobId: run.jobId });

    expect(outcome.outcome).toBe('failed');
    const failed = await bed.runs.get(run.id);
    expect(failed?.errorMessage).toContain('internal error that a retry would not fix');
    expect(failed?.errorMessage).not.toContain('slots');
  });
});

describe('the stuck-run sweeper', () => {
  it('fails runs left pending or generating past the bound, says so, and leaves younger runs alone', async () => {
    const { makeSweepStuckRuns } = await import('../../../lambdas/core/use-cases/generation.ts');
    const pending = (await seedPendingRun(bed)).run;
    const generating = (await seedPendingRun(bed)).run;
    await bed.runs.claim(generating.id, new Date().toISOString(), new Date(0).toISOString());
    const created = Date.parse(pending.createdAt);
    const young = { ...(await seedPendingRun(bed)).run, id: nanoidGenerator.newId() };
    await bed.runs.create({ ...young, createdAt: new Date(created + 59 * 60_000).toISOString() });
    const ours = new Set([pending.id, generating.id, young.id]);
    const sweep = makeSweepStuckRuns({
      runs: {
        ...bed.runs,
        // The table is shared by the whole file: look only at this test's runs.
        listStale: async (status, before, limit) =>
          (await bed.runs.listStale(status, before, limit)).filter((run) => ours.has(run.id)),
      },
      clock: { now: () => new Date(created + 60 * 60_000) },
      stuckAfterMs: 50 * 60_000,
      spend: { adjust: async () => {} },
    });

    const swept = await sweep();

    expect(swept.map((run) => run.id).sort()).toEqual([pending.id, generating.id].sort());
    expect(await bed.runs.get(generating.id)).toMatchObject({
      status: 'failed',
      errorMessage: expect.stringMatching(
        /^The run was still generating more than 50 minutes after it started/,
      ),
    });
    expect((await bed.runs.get(pending.id))?.errorMessage).toMatch(
      /^The run was still pending more than 50 minutes/,
    );
    expect((await bed.runs.get(young.id))?.status).toBe('pending');
  });
});
