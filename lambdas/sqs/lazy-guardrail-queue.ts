/*
 * The guardrail queue of a function that sends a check only while its pipeline has a rollout (the
 * OTLP ingest): the SQS client's module graph (guardrail-queue.ts, an on-demand part of the
 * bundle, lib/bundling.ts) is loaded by the first check, not by every cold start. The queue's URL
 * is read at once, so a missing setting still fails the function's start.
 */
import type { GuardrailQueue } from '../core/ports/rollouts.ts';
import type { QueueUrlVariable } from '../queues.ts';
import { readConfig } from '../wiring/config.ts';
import { queueUrl } from './queue-url.ts';

const loadSqs = () => import('./guardrail-queue.ts');
const URL_VARIABLE = 'GUARDRAIL_QUEUE_URL' satisfies QueueUrlVariable;

/** makeSqsGuardrailQueue with guardrailSendClient, both loaded on the first check. */
export function lazySqsGuardrailQueueFromEnv(): GuardrailQueue {
  const url = readConfig({ [URL_VARIABLE]: queueUrl })[URL_VARIABLE];
  let queue: Promise<GuardrailQueue> | undefined;
  return {
    async send(check, teamId) {
      queue ??= loadSqs().then((sqs) => sqs.makeSqsGuardrailQueue(sqs.guardrailSendClient(), url));
      await (await queue).send(check, teamId);
    },
  };
}
