import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  DEAD_LETTER_HANDLER,
  RUN_SWEEPER,
  STUCK_RUN_AFTER_SECONDS,
  SYNTHESIS_WORKER,
} from '../lambdas/functions.ts';
import { METRIC, METRICS_NAMESPACE } from '../lambdas/observability/metrics.ts';
import { modelPricesFromEnv } from '../lambdas/wiring/model-prices.ts';
import { deadLetterQueueAlarm } from './alarms.ts';
import { handlerEntryPath, onDemandParts } from './bundling.ts';
import {
  type FunctionSettings,
  type GrantableResources,
  SERVICE_NAME,
  ServiceFunction,
} from './service-function.ts';

export interface SynthesisJobsProps {
  readonly resources: GrantableResources;
  readonly deadLetterQueue: IQueue;
  readonly anthropicApiKey: ISecret;
  readonly settings: FunctionSettings;
  /** MODEL_PRICES for the worker (lambdas/wiring/model-prices.ts); checked here at synth time. */
  readonly modelPrices?: string;
}

/**
 * The asynchronous half: the worker that generates runs from the queue, the handler that marks
 * runs failed when their job lands in the DLQ, the sweeper that fails runs left in flight too
 * long, and the alarms that say when any of them goes wrong.
 */
export class SynthesisJobs extends Construct {
  readonly worker: ServiceFunction;
  readonly deadLetterHandler: ServiceFunction;
  readonly sweeper: ServiceFunction;
  readonly workerErrorsAlarm: Alarm;
  readonly deadLetterQueueAlarm: Alarm;

  constructor(scope: Construct, id: string, props: SynthesisJobsProps) {
    super(scope, id);

    this.worker = new ServiceFunction(this, 'Worker', {
      entryFile: handlerEntryPath(SYNTHESIS_WORKER.entry),
      access: SYNTHESIS_WORKER.access,
      resources: { ...props.resources, anthropicApiKey: props.anthropicApiKey },
      settings: props.settings,
      description: 'Generates synthesis runs from queued jobs',
      timeout: Duration.seconds(SYNTHESIS_WORKER.timeoutSeconds),
      memorySize: SYNTHESIS_WORKER.memoryMb,
      // claude-v1 is a file of its own, loaded by the first job that names it.
      onDemandParts: onDemandParts(SYNTHESIS_WORKER.entry),
    });
    if (props.modelPrices !== undefined) {
      modelPricesFromEnv({ MODEL_PRICES: props.modelPrices }); // a bad table fails `cdk synth`, not a cold start
      this.worker.function.addEnvironment('MODEL_PRICES', props.modelPrices);
    }
    this.worker.function.addEventSource(
      new SqsEventSource(props.resources.synthesisQueue, {
        ...SYNTHESIS_WORKER.eventSource,
        reportBatchItemFailures: true,
      }),
    );

    this.deadLetterHandler = new ServiceFunction(this, 'DeadLetterHandler', {
      entryFile: handlerEntryPath(DEAD_LETTER_HANDLER.entry),
      access: DEAD_LETTER_HANDLER.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Marks the runs of dead-lettered synthesis jobs failed',
      timeout: Duration.seconds(DEAD_LETTER_HANDLER.timeoutSeconds),
    });
    this.deadLetterHandler.function.addEventSource(
      new SqsEventSource(props.deadLetterQueue, {
        ...DEAD_LETTER_HANDLER.eventSource,
        reportBatchItemFailures: true,
      }),
    );

    this.sweeper = new ServiceFunction(this, 'Sweeper', {
      entryFile: handlerEntryPath(RUN_SWEEPER.entry),
      access: RUN_SWEEPER.access,
      resources: props.resources,
      settings: props.settings,
      description: `Fails runs still pending or generating ${Math.round(STUCK_RUN_AFTER_SECONDS / 60)} minutes after they started`,
      timeout: Duration.seconds(RUN_SWEEPER.timeoutSeconds),
    });
    new Rule(this, 'SweepSchedule', {
      description: 'Runs the stuck-run sweeper',
      schedule: Schedule.rate(Duration.minutes(RUN_SWEEPER.scheduleMinutes)),
      targets: [new LambdaFunction(this.sweeper.function, { retryAttempts: 2 })],
    });

    // The dead-letter handler drains the DLQ, so a visible message there means it is failing too.
    this.deadLetterQueueAlarm = deadLetterQueueAlarm(
      this,
      'DeadLetterQueueAlarm',
      props.deadLetterQueue,
      'Synthesis jobs are waiting in the dead-letter queue: their runs are not marked failed.',
    );
    // Lambda's Errors metric never counts a record that failed inside a partial batch response, so
    // the alarm watches the worker's own count of failed records (lambdas/sqs/sqs-batch.ts).
    this.workerErrorsAlarm = new Alarm(this, 'WorkerErrorsAlarm', {
      alarmDescription:
        'Synthesis jobs are failing (permanent failures and retries together, at least 3 in 5 minutes): ' +
        'runs end failed or are late. The worker log lines "synthesis run failed" and "… will be retried" name the runs and the errors.',
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC.jobErrors,
        dimensionsMap: { service: SERVICE_NAME },
        period: Duration.minutes(5),
        statistic: 'Sum',
      }),
      threshold: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
