/*
 * The guardrail queue's consumer: judges the rollouts each batch of checks names, with the
 * sweeper's judge (lambdas/sqs/guardrail-batch.ts; core/use-cases/guardrail-checks.ts).
 */
import { makeJudgeNamedRollouts } from '../core/use-cases/guardrail-checks.ts';
import { guardrailBatchHandler } from '../sqs/guardrail-batch.ts';
import { guardrailQueueUrlFromEnv } from '../sqs/guardrail-sender.ts';
import { getSqsClient, makeVisibilityChanger } from '../sqs/sqs-queue.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { isTransientFault } from '../wiring/faults.ts';
import {
  pipelineReadsFromEnv,
  rolloutRepositoryFromEnv,
  runRepositoryFromEnv,
} from '../wiring/repositories.ts';

export const handler = guardrailBatchHandler({
  judge: makeJudgeNamedRollouts({
    pipelines: pipelineReadsFromEnv(),
    rollouts: rolloutRepositoryFromEnv(),
    runs: runRepositoryFromEnv(),
    clock: systemClock,
    ids: nanoidGenerator,
  }),
  hide: makeVisibilityChanger(getSqsClient(), guardrailQueueUrlFromEnv()),
  isTransient: isTransientFault,
});
