/**
 * The app's stacks, by lifecycle: the stateful stack (data, queues, secrets, bus, alarm topic) and
 * the service stack (API, functions, alarms) that refers to it. `npx cdk deploy --all` deploys both,
 * the stateful one first.
 */
import type { App } from 'aws-cdk-lib';
import { type AbuseLimits, DEFAULT_LIMITS } from '../lambdas/limits.ts';
import type { OperationDeclaration } from '../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import { recordShardsOf } from '../lambdas/store/keys.ts';
import { type EmailSettings, emailSettings } from './email.ts';
import { type ModelAccessSettings, modelAccessSettings } from './model-access.ts';
import { ServiceStack } from './service-stack.ts';
import type { StageSettings } from './stage.ts';
import { StatefulStack } from './stateful-stack.ts';

export interface PipelineSynthesisProps {
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
  /** claude-v1's provider (`-c modelProvider=bedrock -c bedrockModelId=…`). @default the Anthropic API */
  readonly model?: ModelAccessSettings;
  /**
   * RECORD_SHARDS of the functions (`-c recordShards=…`), fixed for a deployment's data: a hash of a
   * record's id mod this count places it (docs/scaling.md). @default 32
   */
  readonly recordShards?: string | undefined;
  /** Accounts allowed to route the event bus's events (`-c eventBusConsumerAccounts=111…,222…`). @default none */
  readonly eventBusConsumerAccounts?: readonly string[];
  /** Put in each stack's description. */
  readonly description?: string;
}

export interface PipelineSynthesisStacks {
  readonly stateful: StatefulStack;
  readonly service: ServiceStack;
}

/**
 * The stacks of one deployment: `<id>` is the stateful stack (the id of the single stack before the
 * split, so a deployment made then updates in place) and `<id>-Service` the service stack.
 */
export function createStacks(app: App, id: string, props: PipelineSynthesisProps): PipelineSynthesisStacks {
  const stateful = new StatefulStack(app, id, {
    stage: props.stage,
    ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
    eventBusConsumerAccounts: props.eventBusConsumerAccounts ?? [],
    modelProvider: (props.model ?? modelAccessSettings({})).provider,
    ...(props.description ? { description: `${props.description}: tables, queues, secrets, event bus` } : {}),
  });
  const service = new ServiceStack(app, `${id}-Service`, {
    stage: props.stage,
    stateful,
    operations: props.operations ?? OPERATIONS,
    defaultSynthesisHandler: props.defaultSynthesisHandler,
    email: props.email ?? emailSettings(),
    limits: props.limits ?? DEFAULT_LIMITS,
    lambdaTracing: props.lambdaTracing ?? true,
    ...(props.modelPrices !== undefined ? { modelPrices: props.modelPrices } : {}),
    model: props.model ?? modelAccessSettings({}),
    // Refused at synth when it is not a count the functions would take.
    ...(props.recordShards !== undefined ? { recordShards: recordShardsOf(props.recordShards) } : {}),
    ...(props.description ? { description: `${props.description}: API and functions` } : {}),
  });
  return { stateful, service };
}
