import { Duration, SecretValue } from 'aws-cdk-lib';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
  DELETION_JOB_TIMEOUT_SECONDS,
  GUARDRAIL_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  MAX_RECEIVE_COUNT,
  QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  WEBHOOK_MAX_RECEIVE_COUNT,
  WEBHOOK_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
} from '../lambdas/functions.ts';
import { TABLE_DEFINITIONS, type TableDefinition } from '../lambdas/store/table-definitions.ts';
import { acknowledgeNag } from './nag.ts';
import type { StageSettings } from './stage.ts';

export type TableId = TableDefinition['id'];

/** What a placeholder secret holds until the operator stores the real Anthropic API key. */
export const ANTHROPIC_API_KEY_PLACEHOLDER = 'REPLACE_ME: store the Anthropic API key in this secret';

export interface StatefulProps {
  readonly stage: StageSettings;
}

/** Everything that holds data: the tables, the job queue and its DLQ, the secrets. */
export class Stateful extends Construct {
  /** One table per entry of TABLE_DEFINITIONS, by its id. */
  readonly tables: ReadonlyMap<TableId, Table>;
  readonly synthesisQueue: Queue;
  readonly deadLetterQueue: Queue;
  /** Data-lifecycle jobs: a pipeline's deletion, step after step (lib/data-lifecycle.ts). */
  readonly lifecycleQueue: Queue;
  readonly lifecycleDeadLetterQueue: Queue;
  /**
   * The Anthropic API key for `claude-v1`. CloudFormation cannot create an empty secret and the
   * key must never appear in a template, so the stack stores a placeholder
   * (ANTHROPIC_API_KEY_PLACEHOLDER) and the operator replaces it once after the first deploy:
   * `aws secretsmanager put-secret-value --secret-id <arn> --secret-string <key>`. Later deploys
   * leave the value alone, because the template's value does not change. The key is issued in
   * the Anthropic console, which Secrets Manager cannot rotate, so it is rotated by hand.
   */
  readonly anthropicApiKey: Secret;
  /** The HMAC key that signs session tokens; generated, never leaves Secrets Manager. */
  readonly sessionSigningKey: Secret;
  /** The key that seals webhook secrets (AES-256-GCM); generated, never leaves Secrets Manager. */
  readonly webhookSecretKey: Secret;
  /** One message per (event, webhook); failed attempts wait in it for their next time (up to 12 h). */
  readonly webhookQueue: Queue;
  readonly webhookDeadLetterQueue: Queue;
  /** Rollouts to judge, one check per batch of executions of an arm (lib/guardrails.ts consumes it). */
  readonly guardrailQueue: Queue;
  readonly guardrailDeadLetterQueue: Queue;
  /** The stack's custom event bus: every event is put on it (source `pipeline-synthesis`). */
  readonly eventBus: EventBus;

  constructor(scope: Construct, id: string, props: StatefulProps) {
    super(scope, id);
    const { stage } = props;

    this.tables = new Map(
      TABLE_DEFINITIONS.map((definition) => [definition.id, createTable(this, definition, stage)]),
    );

    this.deadLetterQueue = new Queue(this, 'SynthesisDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.seconds(6 * DEAD_LETTER_HANDLER_TIMEOUT_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dead-letter queue of the synthesis queue; a DLQ of a DLQ would only move the same poison messages again. The dead-letter handler marks their runs failed and an alarm watches this queue.',
    );

    this.synthesisQueue = new Queue(this, 'SynthesisQueue', {
      // AWS's guidance for a Lambda event source: six times the function timeout, so a message is
      // not redelivered while a worker (or its retries within a batch) may still be on it.
      visibilityTimeout: Duration.seconds(QUEUE_VISIBILITY_TIMEOUT_SECONDS),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });

    this.lifecycleDeadLetterQueue = new Queue(this, 'LifecycleDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.lifecycleDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dead-letter queue of the lifecycle queue. A deletion whose job lands here stays pending; the hourly retention job queues pending deletions again.',
    );
    this.lifecycleQueue = new Queue(this, 'LifecycleQueue', {
      visibilityTimeout: Duration.seconds(6 * DELETION_JOB_TIMEOUT_SECONDS),
      deadLetterQueue: { queue: this.lifecycleDeadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });

    this.anthropicApiKey = new Secret(this, 'AnthropicApiKey', {
      description:
        'Anthropic API key used by the claude-v1 synthesis handler. Replace the placeholder value.',
      secretStringValue: SecretValue.unsafePlainText(ANTHROPIC_API_KEY_PLACEHOLDER),
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.anthropicApiKey,
      'AwsSolutions-SMG4',
      'Anthropic API keys are issued in the Anthropic console, which has no API a Secrets Manager rotation function could call; the operator rotates the key by hand.',
    );

    this.sessionSigningKey = new Secret(this, 'SessionSigningKey', {
      description: 'HMAC key that signs session tokens.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
    this.webhookSecretKey = new Secret(this, 'WebhookSecretKey', {
      description: 'AES-256-GCM key (through SHA-256) that seals the signing secrets of webhooks.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.webhookSecretKey,
      'AwsSolutions-SMG4',
      'Rotating this key would make every stored webhook secret unreadable; it is rotated by hand together with re-sealing the secrets, never on a schedule.',
    );

    this.webhookDeadLetterQueue = new Queue(this, 'WebhookDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.webhookDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dead-letter queue of the webhook queue: only deliveries whose deliverer kept crashing land here; a DLQ of it would only move them again.',
    );
    this.webhookQueue = new Queue(this, 'WebhookQueue', {
      visibilityTimeout: Duration.seconds(WEBHOOK_QUEUE_VISIBILITY_TIMEOUT_SECONDS),
      // The schedule's waits add up to about 28 h: the messages must outlive them.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.webhookDeadLetterQueue, maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });

    this.guardrailDeadLetterQueue = new Queue(this, 'GuardrailDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });
    acknowledgeNag(
      this.guardrailDeadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is the dead-letter queue of the guardrail queue: checks whose judgement kept failing land here (an alarm watches it); the sweeper judges their rollouts anyway.',
    );
    this.guardrailQueue = new Queue(this, 'GuardrailQueue', {
      visibilityTimeout: Duration.seconds(GUARDRAIL_QUEUE_VISIBILITY_TIMEOUT_SECONDS),
      // A check older than this is moot: the sweeper has judged its rollout many times since.
      retentionPeriod: Duration.hours(1),
      deadLetterQueue: { queue: this.guardrailDeadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: stage.removalPolicy,
    });

    this.eventBus = new EventBus(this, 'EventBus', {
      description: 'Pipeline Synthesis events (source pipeline-synthesis)',
    });

    acknowledgeNag(
      this.sessionSigningKey,
      'AwsSolutions-SMG4',
      'Rotating the session signing key signs every user out at once; sessions are short-lived and revocable in the auth table, so the key is rotated by hand when needed, not on a schedule.',
    );
  }

  table(id: TableId): Table {
    const table = this.tables.get(id);
    if (!table) throw new Error(`lambdas/store/table-definitions.ts defines no table '${id}'.`);
    return table;
  }
}

function stringKey(name: string): Attribute {
  return { name, type: AttributeType.STRING };
}

function createTable(scope: Construct, definition: TableDefinition, stage: StageSettings): Table {
  const table = new Table(scope, `${definition.id}Table`, {
    partitionKey: stringKey(definition.partitionKey),
    sortKey: definition.sortKey ? stringKey(definition.sortKey) : undefined,
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: definition.timeToLiveAttribute,
    stream: definition.stream === undefined ? undefined : StreamViewType[definition.stream],
    deletionProtection: stage.deletionProtection,
    removalPolicy: stage.removalPolicy,
  });
  for (const index of definition.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: stringKey(index.partitionKey),
      sortKey: index.sortKey ? stringKey(index.sortKey) : undefined,
      projectionType: ProjectionType.ALL,
    });
  }
  return table;
}
