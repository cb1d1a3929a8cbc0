import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { NotFoundError } from '../../../lambdas/core/errors.ts';
import type { GuardrailCheck } from '../../../lambdas/core/ports/rollouts.ts';
import type { CheckResult } from '../../../lambdas/core/use-cases/guardrail-checks.ts';
import { guardrailBackoffSeconds, guardrailBatchHandler } from '../../../lambdas/sqs/guardrail-batch.ts';

function event(bodies: string[], receiveCount = 1): SQSEvent {
  return {
    Records: bodies.map(
      (body, i) =>
        ({
          messageId: `m${i}`,
          receiptHandle: `r${i}`,
          body,
          attributes: { ApproximateReceiveCount: String(receiveCount) },
        }) as unknown as SQSRecord,
    ),
  };
}

const A = JSON.stringify({ pipelineId: 'p1', rolloutId: 'r1' });
const B = JSON.stringify({ pipelineId: 'p2', rolloutId: 'r2' });

function handlerWith(resultOf: (check: GuardrailCheck) => CheckResult, isTransient = (_: unknown) => true) {
  const judged: GuardrailCheck[][] = [];
  const hide = vi.fn(async (_record: SQSRecord, _seconds: number) => {});
  const handler = guardrailBatchHandler({
    judge: async (checks) => {
      judged.push(checks);
      return checks.map(resultOf);
    },
    hide,
    isTransient,
  });
  return { handler, judged, hide };
}

const kept = (check: GuardrailCheck): CheckResult => ({
  check,
  outcome: { ...check, action: 'kept', reason: 'not_enough_data' },
});

describe('a batch of guardrail checks', () => {
  it('asks the judge once per rollout, however many checks name it, and drops bodies that are no check', async () => {
    const { handler, judged } = handlerWith(kept);

    const response = await handler(event([A, A, B, A, 'not json', '{"pipelineId":"p3"}']));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(judged).toEqual([
      [
        { pipelineId: 'p1', rolloutId: 'r1' },
        { pipelineId: 'p2', rolloutId: 'r2' },
      ],
    ]);
  });

  it('retries a rollout whose judgement failed for a moment: one of its records, hidden for a backoff', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const { handler, hide } = handlerWith((check) =>
      check.rolloutId === 'r1' ? { check, error: throttled } : kept(check),
    );

    const response = await handler(event([A, B, A], 3));

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
    expect(hide).toHaveBeenCalledTimes(1);
    const [record, seconds] = hide.mock.calls[0] ?? [];
    expect(record?.messageId).toBe('m0');
    expect(seconds).toBeGreaterThanOrEqual(6);
    expect(seconds).toBeLessThanOrEqual(10);
  });

  it('still reports the retry when hiding the record fails (it waits for the visibility timeout)', async () => {
    const { handler, hide } = handlerWith((check) => ({ check, error: new Error('socket hang up') }));
    hide.mockRejectedValueOnce(new Error('queue unavailable'));

    expect(await handler(event([A]))).toEqual({ batchItemFailures: [{ itemIdentifier: 'm0' }] });
  });

  it('drops a check that can never succeed: a client error, or a fault that is not transient', async () => {
    const gone = handlerWith((check) => ({
      check,
      error: new NotFoundError('The configuration no longer exists.'),
    }));
    const bug = handlerWith(
      (check) => ({ check, error: new TypeError('x is undefined') }),
      () => false,
    );

    expect(await gone.handler(event([A]))).toEqual({ batchItemFailures: [] });
    expect(await bug.handler(event([B]))).toEqual({ batchItemFailures: [] });
    expect(gone.hide).not.toHaveBeenCalled();
    expect(bug.hide).not.toHaveBeenCalled();
  });

  it('backs off 2, 4, 8… seconds by receive, never past a minute', () => {
    const exact = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((count) => guardrailBackoffSeconds(count, exact))).toEqual([
      2, 4, 8, 16, 32, 60, 60, 60,
    ]);
  });
});
