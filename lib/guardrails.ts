import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { GUARDRAIL_JUDGE } from '../lambdas/functions.ts';
import { deadLetterQueueAlarm } from './alarms.ts';
import { handlerEntryPath } from './bundling.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

export interface RolloutGuardrailsProps {
  readonly resources: GrantableResources & { guardrailQueue: IQueue };
  readonly guardrailDeadLetterQueue: IQueue;
  readonly settings: FunctionSettings;
}

/**
 * The per-batch guardrail (core/rollouts/guardrails.ts): POST …/executions queues a check for an
 * active rollout; the judge consumes the queue in coalesced batches (a batching window) and ends
 * rollouts whose figures say so. The sweeper's pass stays the backstop; an alarm watches the DLQ.
 */
export class RolloutGuardrails extends Construct {
  readonly judge: ServiceFunction;
  readonly deadLetterQueueAlarm: Alarm;

  constructor(scope: Construct, id: string, props: RolloutGuardrailsProps) {
    super(scope, id);
    this.judge = new ServiceFunction(this, 'Judge', {
      entryFile: handlerEntryPath(GUARDRAIL_JUDGE.entry),
      access: GUARDRAIL_JUDGE.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Judges the active rollouts that newly recorded executions name, by their guardrails',
      timeout: Duration.seconds(GUARDRAIL_JUDGE.timeoutSeconds),
    });
    const { batchSize, maxConcurrency, maxBatchingWindowSeconds } = GUARDRAIL_JUDGE.eventSource;
    this.judge.function.addEventSource(
      new SqsEventSource(props.resources.guardrailQueue, {
        batchSize,
        maxConcurrency,
        maxBatchingWindow: Duration.seconds(maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
      }),
    );
    this.deadLetterQueueAlarm = deadLetterQueueAlarm(
      this,
      'DeadLetterQueueAlarm',
      props.guardrailDeadLetterQueue,
      'Guardrail checks are waiting in their dead-letter queue: judging a rollout kept failing. The sweeper still ' +
        'judges rollouts every minute; the judge\'s log lines "guardrail check failed" name the rollouts and the errors.',
    );
  }
}
