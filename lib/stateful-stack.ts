/**
 * The stateful stack: what holds data or must outlive a redeploy of the functions — the tables,
 * every queue of lambdas/queues.ts, the secrets, the event bus and the alarm topic. It keeps the id
 * (and the construct paths, hence the logical ids) of the single stack it was split from, so a
 * deployment made before the split updates in place and no table is ever replaced.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { QueueName } from '../lambdas/queues.ts';
import { TABLE_DEFINITIONS } from '../lambdas/store/table-definitions.ts';
import type { ModelProvider } from '../lambdas/wiring/bedrock.ts';
import { AlarmTopic } from './alarm-topic.ts';
import { ApiGatewayAccount } from './api-gateway-account.ts';
import { shareEventBus } from './event-bus.ts';
import { pascalCase } from './names.ts';
import { createQueues, type DeployedQueue } from './queues.ts';
import type { StageSettings } from './stage.ts';
import { Stateful } from './stateful.ts';

export interface StatefulStackProps extends StackProps {
  readonly stage: StageSettings;
  /** An email address subscribed to the alarm topic (`-c alarmEmail=…`). @default none */
  readonly alarmEmail?: string;
  /** Accounts allowed to route the event bus's events (`-c eventBusConsumerAccounts=111…,222…`). @default none */
  readonly eventBusConsumerAccounts?: readonly string[];
  /** claude-v1's provider: with `bedrock` no Anthropic key secret is created. @default 'anthropic' */
  readonly modelProvider?: ModelProvider;
}

export class StatefulStack extends Stack {
  /** The tables, the secrets and the event bus. */
  readonly stateful: Stateful;
  /** Every queue of lambdas/queues.ts by name, with its dead-letter queue. */
  readonly queues: ReadonlyMap<QueueName, DeployedQueue>;
  readonly alarmTopic: Topic;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, { terminationProtection: props.stage.deletionProtection, ...props });
    this.stateful = new Stateful(this, 'Stateful', {
      stage: props.stage,
      modelProvider: props.modelProvider ?? 'anthropic',
    });
    this.queues = createQueues(this, props.stage.removalPolicy);
    // 'Operations': the construct that held the topic before the split, so its logical id stays.
    // API Gateway's account-wide logging role, which the service stack's stage needs first.
    new ApiGatewayAccount(this, 'ApiGatewayAccount');
    this.alarmTopic = new AlarmTopic(this, 'Operations', {
      removalPolicy: props.stage.removalPolicy,
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    }).topic;
    shareEventBus(this.stateful.eventBus, props.eventBusConsumerAccounts ?? []);

    for (const definition of TABLE_DEFINITIONS) {
      new CfnOutput(this, `${definition.id}TableName`, {
        value: this.stateful.table(definition.id).tableName,
      });
    }
    for (const [name, deployed] of this.queues) {
      new CfnOutput(this, `${pascalCase(name)}QueueUrl`, { value: deployed.queue.queueUrl });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
    new CfnOutput(this, 'EventBusArn', { value: this.stateful.eventBus.eventBusArn });
  }

  /** The deployed queue named `name`. */
  queue(name: QueueName): DeployedQueue {
    const deployed = this.queues.get(name);
    if (!deployed) throw new Error(`lambdas/queues.ts declares no queue '${name}'.`);
    return deployed;
  }
}
