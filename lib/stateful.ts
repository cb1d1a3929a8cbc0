/**
 * Everything that holds data but the queues: the tables (one per lambdas/store/table-definitions.ts
 * entry), the three secrets and the event bus.
 */
import { SecretValue } from 'aws-cdk-lib';
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
import { Construct } from 'constructs';
import { TABLE_DEFINITIONS, type TableDefinition } from '../lambdas/store/table-definitions.ts';
import type { ModelProvider } from '../lambdas/wiring/bedrock.ts';
import { acknowledgeNag } from './nag.ts';
import type { StageSettings } from './stage.ts';

export type TableId = TableDefinition['id'];

/** What a placeholder secret holds until the operator stores the real Anthropic API key. */
export const ANTHROPIC_API_KEY_PLACEHOLDER = 'REPLACE_ME: store the Anthropic API key in this secret';

export interface StatefulProps {
  readonly stage: StageSettings;
  /** Whether claude-v1 calls the Anthropic API with a key (`anthropic`) or Bedrock with the worker's role. */
  readonly modelProvider: ModelProvider;
}

/**
 * The tables, the secrets and the event bus of the stateful stack (its queues are lib/queues.ts).
 * Construct ids are part of the logical ids of deployed resources: renaming one replaces a table.
 */
export class Stateful extends Construct {
  /** One table per entry of TABLE_DEFINITIONS, by its id. */
  readonly tables: ReadonlyMap<TableId, Table>;
  /**
   * The Anthropic API key for `claude-v1`. CloudFormation cannot create an empty secret and the
   * key must never appear in a template, so the stack stores a placeholder
   * (ANTHROPIC_API_KEY_PLACEHOLDER) and the operator replaces it once after the first deploy:
   * `aws secretsmanager put-secret-value --secret-id <arn> --secret-string <key>`. Later deploys
   * leave the value alone, because the template's value does not change. The key is issued in
   * the Anthropic console, which Secrets Manager cannot rotate, so it is rotated by hand. None
   * with `-c modelProvider=bedrock`: the worker's role calls Bedrock, no key exists to leak.
   */
  readonly anthropicApiKey: Secret | undefined;
  /** The HMAC key that signs session tokens; generated, never leaves Secrets Manager. */
  readonly sessionSigningKey: Secret;
  /** The key that seals webhook secrets (AES-256-GCM); generated, never leaves Secrets Manager. */
  readonly webhookSecretKey: Secret;
  /** The stack's custom event bus: every event is put on it (source `pipeline-synthesis`). */
  readonly eventBus: EventBus;

  constructor(scope: Construct, id: string, props: StatefulProps) {
    super(scope, id);
    const { stage } = props;

    this.tables = new Map(
      TABLE_DEFINITIONS.map((definition) => [definition.id, createTable(this, definition, stage)]),
    );

    this.anthropicApiKey =
      props.modelProvider === 'anthropic' ? createAnthropicApiKey(this, stage) : undefined;

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

/** The placeholder secret the operator fills with the Anthropic API key. */
function createAnthropicApiKey(scope: Construct, stage: StageSettings): Secret {
  const secret = new Secret(scope, 'AnthropicApiKey', {
    description: 'Anthropic API key used by the claude-v1 synthesis handler. Replace the placeholder value.',
    secretStringValue: SecretValue.unsafePlainText(ANTHROPIC_API_KEY_PLACEHOLDER),
    removalPolicy: stage.removalPolicy,
  });
  acknowledgeNag(
    secret,
    'AwsSolutions-SMG4',
    'Anthropic API keys are issued in the Anthropic console, which has no API a Secrets Manager rotation function could call; the operator rotates the key by hand.',
  );
  return secret;
}
