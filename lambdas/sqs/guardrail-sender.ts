/*
 * The guardrail queue as the functions that record executions see it: the URL read at start, the
 * SQS client (about 24 KB of their bundles) loaded by the first check, which only a pipeline with a
 * rollout sends (lib/bundling.ts builds guardrail-queue.ts as an on-demand part of them).
 */
import type { GuardrailCheck, GuardrailQueue } from '../core/ports/rollouts.ts';
import { logger } from '../observability/logger.ts';
import type { QueueUrlVariable } from '../queues.ts';
import { readConfig } from '../wiring/config.ts';
import { queueUrl } from './queue-url.ts';

/** Where the guardrail queue's URL is (lambdas/queues.ts): its senders and its consumer, which hides checks. */
const URL_VARIABLE = 'GUARDRAIL_QUEUE_URL' satisfies QueueUrlVariable;

/** The guardrail queue's URL, from the environment. */
export function guardrailQueueUrlFromEnv(): string {
  return readConfig({ [URL_VARIABLE]: queueUrl })[URL_VARIABLE];
}

/** The guardrail queue of GUARDRAIL_QUEUE_URL, its SQS adapter imported on the first send. */
export function guardrailQueueFromEnv(): GuardrailQueue {
  const url = guardrailQueueUrlFromEnv();
  let queue: Promise<GuardrailQueue> | undefined;
  return {
    async send(check, teamId) {
      queue ??= import('./guardrail-queue.ts').then(
        ({ makeSqsGuardrailQueue, guardrailSendClient }) => makeSqsGuardrailQueue(guardrailSendClient(), url),
        (error: unknown) => {
          queue = undefined;
          throw error;
        },
      );
      await (await queue).send(check, teamId);
    },
  };
}

/**
 * The recording functions' guardrails: the queue of GUARDRAIL_QUEUE_URL, and a send that failed
 * logged once with the rollout's ids (the recording still succeeds; the sweeper is the backstop).
 */
export function guardrailsFromEnv() {
  return {
    queue: guardrailQueueFromEnv(),
    unsent: (check: GuardrailCheck, error: unknown) =>
      logger.warn('guardrail check not queued; the sweeper judges the rollout on its next pass', {
        ...check,
        errorClass: error instanceof Error ? error.name : typeof error,
        errorMessage: error instanceof Error ? error.message : String(error),
      }),
  };
}
