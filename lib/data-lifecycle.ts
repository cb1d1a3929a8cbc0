import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PIPELINE_DELETER, RETENTION_JOB } from '../lambdas/functions.ts';
import { handlerEntryPath } from './bundling.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

export interface DataLifecycleProps {
  readonly resources: GrantableResources & { lifecycleQueue: IQueue };
  readonly settings: FunctionSettings;
}

/**
 * Retention and deletion: the deletion job on the lifecycle queue, and the hourly
 * job that applies shortened retention windows (DynamoDB TTL removes the rest as records expire).
 */
export class DataLifecycle extends Construct {
  readonly deleter: ServiceFunction;
  readonly retentionJob: ServiceFunction;

  constructor(scope: Construct, id: string, props: DataLifecycleProps) {
    super(scope, id);
    this.deleter = new ServiceFunction(this, 'PipelineDeleter', {
      entryFile: handlerEntryPath(PIPELINE_DELETER.entry),
      access: PIPELINE_DELETER.access,
      resources: props.resources,
      settings: props.settings,
      description: "Removes a deleted pipeline's items in bounded, re-queued steps",
      timeout: Duration.seconds(PIPELINE_DELETER.timeoutSeconds),
    });
    this.deleter.function.addEventSource(
      new SqsEventSource(props.resources.lifecycleQueue, {
        ...PIPELINE_DELETER.eventSource,
        reportBatchItemFailures: true,
      }),
    );

    this.retentionJob = new ServiceFunction(this, 'RetentionJob', {
      entryFile: handlerEntryPath(RETENTION_JOB.entry),
      access: RETENTION_JOB.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Removes signals and executions a shortened retention window left outside it',
      timeout: Duration.seconds(RETENTION_JOB.timeoutSeconds),
    });
    new Rule(this, 'RetentionSchedule', {
      description: 'Runs the retention job',
      schedule: Schedule.rate(Duration.minutes(RETENTION_JOB.scheduleMinutes)),
      targets: [new LambdaFunction(this.retentionJob.function, { retryAttempts: 2 })],
    });
  }
}
