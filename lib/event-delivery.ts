import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import { AccountPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  EVENT_DELIVERER,
  EVENT_RELAY,
  type StreamSourceDefinition,
  WEBHOOK_DELIVERER,
} from '../lambdas/functions.ts';
import { deadLetterQueueAlarm } from './alarms.ts';
import { handlerEntryPath } from './bundling.ts';
import { acknowledgeNag } from './nag.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

export interface EventDeliveryProps {
  readonly resources: GrantableResources;
  /** The events table, and the tables whose streams carry the events of one-item changes (runs, settings). */
  readonly tables: Readonly<Record<StreamSourceDefinition['table'], ITable>>;
  readonly webhookQueue: Queue;
  readonly eventBus: EventBus;
  /** Accounts that may create rules on the bus routing its events to themselves; no other may. */
  readonly consumerAccounts: readonly string[];
  readonly settings: FunctionSettings;
  readonly removalPolicy: RemovalPolicy;
}

/** 12-digit AWS account ids only: a typo must fail `cdk synth`, not open the bus to a wrong principal. */
const ACCOUNT_ID = /^\d{12}$/;

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

/**
 * Delivery of the outbox: the events table's stream → the event deliverer (fan-out
 * to the webhook queue and the event bus; partial batch failures, bisect, a DLQ for what keeps
 * failing) → the webhook deliverer (one signed attempt per message, retried on schedule). The runs
 * and settings tables' streams → the relay, which writes the events their items carry into the
 * events table.
 */
export class EventDelivery extends Construct {
  readonly eventDeliverer: ServiceFunction;
  readonly eventRelay: ServiceFunction;
  readonly webhookDeliverer: ServiceFunction;
  readonly streamDeadLetterQueue: Queue;
  /** Stream batches gave up on: events that were committed but not delivered or not relayed. */
  readonly deadLetterQueueAlarm: Alarm;

  constructor(scope: Construct, id: string, props: EventDeliveryProps) {
    super(scope, id);

    this.streamDeadLetterQueue = new Queue(this, 'EventDeliveryDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: props.removalPolicy,
    });
    acknowledgeNag(
      this.streamDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the on-failure destination of the events stream: it holds the stream positions of batches that could not be delivered or put on the bus, for a person to replay.',
    );

    this.deadLetterQueueAlarm = deadLetterQueueAlarm(
      this,
      'DeadLetterQueueAlarm',
      this.streamDeadLetterQueue,
      'Stream batches of the events, runs or settings table are in the dead-letter queue: committed events were not ' +
        'delivered (webhooks, event bus) or not relayed into the events table. Each message names the shard and ' +
        "sequence numbers to replay; the deliverer's and the relay's error log lines name the events.",
    );

    this.eventDeliverer = new ServiceFunction(this, 'EventDeliverer', {
      entryFile: handlerEntryPath(EVENT_DELIVERER.entry),
      access: EVENT_DELIVERER.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Fans each committed event out to its webhooks and the event bus',
      timeout: Duration.seconds(EVENT_DELIVERER.timeoutSeconds),
    });
    const [eventSource] = EVENT_DELIVERER.streamSources;
    if (!eventSource) throw new Error('The event deliverer reads the events table stream.');
    this.eventDeliverer.function.addEventSource(
      new DynamoEventSource(props.tables.Events, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: eventSource.batchSize,
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: 20,
        onFailure: new SqsDlq(this.streamDeadLetterQueue),
        // Only new events: TTL expiries (REMOVE) never invoke the function.
        filters: streamFilters(eventSource),
      }),
    );

    this.eventRelay = new ServiceFunction(this, 'EventRelay', {
      entryFile: handlerEntryPath(EVENT_RELAY.entry),
      access: EVENT_RELAY.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Writes the events that one-item changes carry (runs, settings) into the events table',
      timeout: Duration.seconds(EVENT_RELAY.timeoutSeconds),
    });
    for (const source of EVENT_RELAY.streamSources) {
      this.eventRelay.function.addEventSource(
        new DynamoEventSource(props.tables[source.table], {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: source.batchSize,
          reportBatchItemFailures: true,
          bisectBatchOnError: true,
          retryAttempts: 20,
          onFailure: new SqsDlq(this.streamDeadLetterQueue),
          // Only writes that hold an event; the function skips one whose old image held it already.
          filters: streamFilters(source),
        }),
      );
    }

    this.webhookDeliverer = new ServiceFunction(this, 'WebhookDeliverer', {
      entryFile: handlerEntryPath(WEBHOOK_DELIVERER.entry),
      access: WEBHOOK_DELIVERER.access,
      resources: props.resources,
      settings: props.settings,
      description: 'Delivers queued events to webhooks, signed, retried on schedule',
      timeout: Duration.seconds(WEBHOOK_DELIVERER.timeoutSeconds),
    });
    this.webhookDeliverer.function.addEventSource(
      new SqsEventSource(props.webhookQueue, {
        ...WEBHOOK_DELIVERER.eventSource,
        reportBatchItemFailures: true,
      }),
    );

    const accounts = [...new Set(props.consumerAccounts)];
    for (const account of accounts) {
      if (!ACCOUNT_ID.test(account))
        throw new Error(`eventBusConsumerAccounts: '${account}' is not a 12-digit account id.`);
    }
    if (accounts.length > 0) {
      const stack = Stack.of(this);
      // The consumer accounts manage only rules they create themselves on this bus.
      props.eventBus.addToResourcePolicy(
        new PolicyStatement({
          sid: 'ConsumerAccountsManageTheirRules',
          principals: accounts.map((account) => new AccountPrincipal(account)),
          actions: [
            'events:PutRule',
            'events:PutTargets',
            'events:DeleteRule',
            'events:RemoveTargets',
            'events:DisableRule',
            'events:EnableRule',
            'events:DescribeRule',
            'events:ListTargetsByRule',
          ],
          resources: [
            stack.formatArn({
              service: 'events',
              resource: 'rule',
              resourceName: `${props.eventBus.eventBusName}/*`,
            }),
          ],
          // An IAM policy variable, not a template placeholder.
          // biome-ignore lint/suspicious/noTemplateCurlyInString: IAM resolves ${aws:PrincipalAccount}
          conditions: { StringEqualsIfExists: { 'events:creatorAccount': '${aws:PrincipalAccount}' } },
        }),
      );
    }
  }
}
