import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEAD_LETTER_HANDLER, SYNTHESIS_WORKER, WORKER_TIMEOUT_SECONDS } from '../lambdas/routes.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';
import { DEAD_LETTER_HANDLER_TIMEOUT_SECONDS } from './stateful.ts';

export interface SynthesisJobsProps {
  readonly resources: GrantableResources;
  readonly deadLetterQueue: IQueue;
  readonly anthropicApiKey: ISecret;
  readonly settings: FunctionSettings;
}

/**
 * The asynchronous half: the worker that generates runs from the queue, the handler that marks
 * runs failed when their job lands in the DLQ, and the alarms that say when either goes wrong.
 * The alarms have no actions: the operator subscribes whatever pager the account uses.
 */
export class SynthesisJobs extends Construct {
  readonly worker: ServiceFunction;
  readonly deadLetterHandler: ServiceFunction;

  constructor(scope: Construct, id: string, props: SynthesisJobsProps) {
    super(scope, id);

    this.worker = new ServiceFunction(this, 'Worker', {
      entry: SYNTHESIS_WORKER.entry,
      access: SYNTHESIS_WORKER.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Generates synthesis runs from queued jobs',
      timeout: Duration.seconds(WORKER_TIMEOUT_SECONDS),
      memorySize: 512,
    });
    props.anthropicApiKey.grantRead(this.worker.function);
    this.worker.function.addEnvironment('ANTHROPIC_SECRET_ARN', props.anthropicApiKey.secretArn);
    this.worker.function.addEventSource(
      new SqsEventSource(props.resources.synthesisQueue, {
        batchSize: 5,
        reportBatchItemFailures: true,
        // Bounds the concurrent model calls (and the Anthropic rate limit they share).
        maxConcurrency: 5,
      }),
    );

    this.deadLetterHandler = new ServiceFunction(this, 'DeadLetterHandler', {
      entry: DEAD_LETTER_HANDLER.entry,
      access: DEAD_LETTER_HANDLER.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Marks the runs of dead-lettered synthesis jobs failed',
      timeout: Duration.seconds(DEAD_LETTER_HANDLER_TIMEOUT_SECONDS),
    });
    this.deadLetterHandler.function.addEventSource(
      new SqsEventSource(props.deadLetterQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );

    // The dead-letter handler drains the DLQ, so a visible message there means it is failing too.
    new Alarm(this, 'DeadLetterQueueAlarm', {
      alarmDescription:
        'Synthesis jobs are waiting in the dead-letter queue: their runs are not marked failed.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    new Alarm(this, 'WorkerErrorsAlarm', {
      alarmDescription: 'The synthesis worker threw: jobs are being retried and may end in the DLQ.',
      metric: this.worker.function.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
