import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { type AbuseLimits, DEFAULT_LIMITS } from '../lambdas/limits.ts';
import type { OperationDeclaration } from '../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import { TABLE_DEFINITIONS } from '../lambdas/store/table-definitions.ts';
import { Api } from './api.ts';
import { DataLifecycle } from './data-lifecycle.ts';
import { type EmailSettings, emailSettings } from './email.ts';
import { EventDelivery } from './event-delivery.ts';
import { RolloutGuardrails } from './guardrails.ts';
import { Operations } from './operations.ts';
import type { FunctionSettings } from './service-function.ts';
import type { StageSettings } from './stage.ts';
import { Stateful } from './stateful.ts';
import { SynthesisJobs } from './synthesis-jobs.ts';

export interface PipelineSynthesisStackProps extends StackProps {
  readonly stage: StageSettings;
  /** Handler a synthesis request gets when its body names none. */
  readonly defaultSynthesisHandler: string;
  /** Active X-Ray tracing on the Lambdas (the API stage always traces). @default true */
  readonly lambdaTracing?: boolean;
  /** Sender and link base of sign-in emails. @default emailSettings(): a placeholder sender */
  readonly email?: EmailSettings;
  /** @default OPERATIONS from lambdas/operations/index.ts */
  readonly operations?: readonly OperationDeclaration[];
  /** Rate limits and the synthesis quota. @default DEFAULT_LIMITS from lambdas/limits.ts */
  readonly limits?: AbuseLimits;
  /** An email address subscribed to the alarm topic (`-c alarmEmail=…`). @default none */
  readonly alarmEmail?: string;
  /** MODEL_PRICES for the worker: JSON prices per model prefix (`-c modelPrices=…`). @default list prices */
  readonly modelPrices?: string;
  /** Accounts allowed to route the event bus's events (`-c eventBusConsumerAccounts=111…,222…`). @default none */
  readonly eventBusConsumerAccounts?: readonly string[];
}

/** The whole service in one stack: stateful resources, the API, the synthesis jobs. */
export class PipelineSynthesisStack extends Stack {
  readonly stateful: Stateful;
  readonly api: Api;
  readonly jobs: SynthesisJobs;
  readonly operations: Operations;
  readonly lifecycle: DataLifecycle;
  readonly eventDelivery: EventDelivery;
  readonly guardrails: RolloutGuardrails;

  constructor(scope: Construct, id: string, props: PipelineSynthesisStackProps) {
    super(scope, id, { terminationProtection: props.stage.deletionProtection, ...props });

    this.stateful = new Stateful(this, 'Stateful', { stage: props.stage });
    const resources = {
      tables: this.stateful.tables,
      synthesisQueue: this.stateful.synthesisQueue,
      lifecycleQueue: this.stateful.lifecycleQueue,
      guardrailQueue: this.stateful.guardrailQueue,
      sessionSigningKey: this.stateful.sessionSigningKey,
      webhooks: {
        queue: this.stateful.webhookQueue,
        secretKey: this.stateful.webhookSecretKey,
        eventBus: this.stateful.eventBus,
      },
    };
    const settings: FunctionSettings = {
      tracing: props.lambdaTracing ?? true,
      removalPolicy: props.stage.removalPolicy,
      logLevel: 'INFO',
    };

    this.api = new Api(this, 'Api', {
      stageName: props.stage.name,
      operations: props.operations ?? OPERATIONS,
      resources,
      email: props.email ?? emailSettings(),
      settings,
      defaultSynthesisHandler: props.defaultSynthesisHandler,
      limits: props.limits ?? DEFAULT_LIMITS,
    });
    this.jobs = new SynthesisJobs(this, 'SynthesisJobs', {
      resources,
      deadLetterQueue: this.stateful.deadLetterQueue,
      anthropicApiKey: this.stateful.anthropicApiKey,
      settings,
      ...(props.modelPrices ? { modelPrices: props.modelPrices } : {}),
    });
    this.lifecycle = new DataLifecycle(this, 'DataLifecycle', { resources, settings });
    this.eventDelivery = new EventDelivery(this, 'EventDelivery', {
      resources,
      tables: {
        Events: this.stateful.table('Events'),
        Runs: this.stateful.table('Runs'),
        Settings: this.stateful.table('Settings'),
      },
      webhookQueue: this.stateful.webhookQueue,
      eventBus: this.stateful.eventBus,
      consumerAccounts: props.eventBusConsumerAccounts ?? [],
      settings,
      removalPolicy: props.stage.removalPolicy,
    });
    this.guardrails = new RolloutGuardrails(this, 'RolloutGuardrails', {
      resources,
      guardrailDeadLetterQueue: this.stateful.guardrailDeadLetterQueue,
      settings,
    });
    this.operations = new Operations(this, 'Operations', {
      restApi: this.api.restApi,
      authorizer: this.api.authorizerFunction.function,
      worker: this.jobs.worker.function,
      synthesisQueue: this.stateful.synthesisQueue,
      deadLetterQueue: this.stateful.deadLetterQueue,
      existingAlarms: [
        this.jobs.deadLetterQueueAlarm,
        this.jobs.workerErrorsAlarm,
        this.guardrails.deadLetterQueueAlarm,
        this.eventDelivery.deadLetterQueueAlarm,
      ],
      removalPolicy: props.stage.removalPolicy,
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url });
    for (const definition of TABLE_DEFINITIONS) {
      new CfnOutput(this, `${definition.id}TableName`, {
        value: this.stateful.table(definition.id).tableName,
      });
    }
    new CfnOutput(this, 'SynthesisQueueUrl', { value: this.stateful.synthesisQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.operations.topic.topicArn });
    new CfnOutput(this, 'EventBusArn', { value: this.stateful.eventBus.eventBusArn });
  }
}
