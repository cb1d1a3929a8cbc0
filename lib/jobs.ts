/**
 * The background functions: one loop over HANDLERS (lambdas/functions.ts) makes each handler's
 * function and its trigger — an SQS event source on its queue (or that queue's DLQ), a schedule,
 * event sources on table streams with their failure queue, or a custom resource run on each deploy. No handler or queue is named here.
 */
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, FilterRule, type IFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  type HandlerDefinition,
  type QueueTrigger,
  queueTriggerOf,
  runsOnDeploy,
  type StreamSourceDefinition,
  scheduleOf,
  streamSourcesOf,
} from '../lambdas/functions.ts';
import type { QueueName } from '../lambdas/queues.ts';
import { handlerEntryPath, onDemandParts } from './bundling.ts';
import { pascalCase } from './names.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';
import { UsageKeyBackfill } from './usage-key-backfill.ts';

/** Retries of a stream batch before its position goes to the failure queue (bisecting on the way). */
const STREAM_RETRY_ATTEMPTS = 20;
/** Retries EventBridge makes of a scheduled invocation that failed. */
const SCHEDULE_RETRY_ATTEMPTS = 2;

export interface JobsProps {
  /** The background handlers: every one whose trigger is not the API's authorizer. */
  readonly handlers: readonly HandlerDefinition[];
  readonly resources: GrantableResources;
  readonly settings: FunctionSettings;
}

/** The background functions with their triggers. */
export class Jobs extends Construct {
  /** Each handler's function, by its entry. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, id: string, props: JobsProps) {
    super(scope, id);
    const functions = new Map<string, ServiceFunction>();
    for (const handler of props.handlers) {
      const fn = new ServiceFunction(this, pascalCase(handler.entry), {
        entryFile: handlerEntryPath(handler.entry),
        access: handler.access,
        trigger: handler.trigger,
        resources: props.resources,
        settings: props.settings,
        description: handler.description,
        timeout: Duration.seconds(handler.timeoutSeconds),
        ...(handler.memoryMb ? { memorySize: handler.memoryMb } : {}),
        onDemandParts: onDemandParts(handler.entry),
      });
      this.addTrigger(handler, fn.function, props.resources, props.settings);
      functions.set(handler.entry, fn);
    }
    this.functions = functions;
  }

  private addTrigger(
    handler: HandlerDefinition,
    fn: IFunction,
    resources: GrantableResources,
    settings: FunctionSettings,
  ): void {
    const queue = queueTriggerOf(handler);
    if (queue) fn.addEventSource(sqsEventSource(queue, resources));
    for (const source of streamSourcesOf(handler)) fn.addEventSource(streamEventSource(source, resources));
    const schedule = scheduleOf(handler);
    if (schedule) {
      new Rule(this, `${pascalCase(handler.entry)}Schedule`, {
        description: `Runs ${handler.entry}: ${handler.description}`,
        schedule: Schedule.rate(Duration.minutes(schedule.everyMinutes)),
        targets: [new LambdaFunction(fn, { retryAttempts: SCHEDULE_RETRY_ATTEMPTS })],
      });
    }
    // The one handler run on deploy is the usage-key backfill (its access names the plan's keys).
    if (runsOnDeploy(handler)) {
      if (resources.evaluationPlanId === undefined)
        throw new Error(`No evaluation usage plan for ${handler.entry}, which runs on deploy.`);
      new UsageKeyBackfill(this, `${pascalCase(handler.entry)}OnDeploy`, {
        usagePlanId: resources.evaluationPlanId,
        handler: fn,
        settings,
      });
    }
  }
}

function queueNamed(
  resources: GrantableResources,
  name: QueueName,
): { queue: IQueue; deadLetterQueue?: IQueue } {
  const deployed = resources.queues.get(name);
  if (!deployed) throw new Error(`No queue '${name}' for a trigger.`);
  return deployed;
}

/** Lambda's SQS event source with partial batch failures, on the queue or its dead-letter queue. */
function sqsEventSource(trigger: QueueTrigger, resources: GrantableResources): SqsEventSource {
  const deployed = queueNamed(resources, trigger.queue);
  const queue = trigger.deadLetters ? deployed.deadLetterQueue : deployed.queue;
  if (!queue) throw new Error(`Queue '${trigger.queue}' has no dead-letter queue.`);
  return new SqsEventSource(queue, {
    batchSize: trigger.batchSize,
    ...(trigger.maxConcurrency ? { maxConcurrency: trigger.maxConcurrency } : {}),
    ...(trigger.maxBatchingWindowSeconds
      ? { maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds) }
      : {}),
    reportBatchItemFailures: true,
  });
}

/** A table stream's event source: partial batch failures, bisect, retries, then the failure queue. */
function streamEventSource(source: StreamSourceDefinition, resources: GrantableResources): DynamoEventSource {
  const table: ITable | undefined = resources.tables.get(source.table);
  if (!table) throw new Error(`No table '${source.table}' for a stream source.`);
  return new DynamoEventSource(table, {
    startingPosition: StartingPosition.TRIM_HORIZON,
    batchSize: source.batchSize,
    reportBatchItemFailures: true,
    bisectBatchOnError: true,
    retryAttempts: STREAM_RETRY_ATTEMPTS,
    onFailure: new SqsDlq(queueNamed(resources, source.onFailure).queue),
    filters: streamFilters(source),
  });
}

/** The stream's filter criteria as lambdas/functions.ts states them (local/streams/ applies the same). */
function streamFilters(source: StreamSourceDefinition) {
  return [
    FilterCriteria.filter({
      eventName: FilterRule.or(...source.eventNames),
      ...(source.newImageHas
        ? { dynamodb: { NewImage: { [source.newImageHas]: { S: FilterRule.exists() } } } }
        : {}),
    }),
  ];
}
