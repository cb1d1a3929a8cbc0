/**
 * The service stack: the REST API and its authorizer, the alarms and the dashboard, and in nested
 * stacks the functions — the background ones with their triggers (lib/jobs.ts) and the operations'
 * by route group (lib/routes.ts). It holds no data: it refers to the stateful stack's resources
 * (CDK makes the exports and imports) and can be replaced as a whole without losing any.
 */
import { CfnOutput, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { HANDLERS, MONITOR_JUDGE, SYNTHESIS_WORKER } from '../lambdas/functions.ts';
import type { AbuseLimits } from '../lambdas/limits.ts';
import { evaluationPaths, type OperationDeclaration } from '../lambdas/operations/declaration.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { modelPricesFromEnv } from '../lambdas/wiring/model-prices.ts';
import { Api } from './api.ts';
import type { EmailSettings } from './email.ts';
import { Jobs } from './jobs.ts';
import { type ModelAccessSettings, modelResource } from './model-access.ts';
import { Operations } from './operations.ts';
import { ROUTE_GROUPS, RouteFunctions, routeGroupOf } from './routes.ts';
import type { FunctionSettings, GrantableResources, ServiceFunction } from './service-function.ts';
import type { StageSettings } from './stage.ts';
import type { StatefulStack } from './stateful-stack.ts';

export interface ServiceStackProps extends StackProps {
  readonly stage: StageSettings;
  /** The stack whose tables, queues, secrets, bus and alarm topic the functions use. */
  readonly stateful: StatefulStack;
  /** The API's operations (lambdas/operations/index.ts): a method per operation, a function per module. */
  readonly operations: readonly OperationDeclaration[];
  /** Handler a synthesis request gets when its body names none. */
  readonly defaultSynthesisHandler: string;
  /** Sender and link base of sign-in emails; without `appUrl`, magic links open this API's `/app`. */
  readonly email: EmailSettings;
  readonly limits: AbuseLimits;
  /** Active X-Ray tracing on the Lambdas (the API stage always traces). */
  readonly lambdaTracing: boolean;
  /** MODEL_PRICES for the functions that call the model (`-c modelPrices=…`). @default list prices */
  readonly modelPrices?: string;
  /** RECORD_SHARDS of the functions using the data table (lambdas/store/keys.ts). @default 32 */
  readonly recordShards?: number;
  /** claude-v1's provider, and for Bedrock the model whose ARNs the worker may invoke. */
  readonly model: ModelAccessSettings;
}

export class ServiceStack extends Stack {
  readonly api: Api;
  /** The background functions, by handler entry. */
  readonly jobs: Jobs;
  /** The operations' functions, by module. */
  readonly routeFunctions: ReadonlyMap<string, ServiceFunction>;
  readonly operations: Operations;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, { terminationProtection: props.stage.deletionProtection, ...props });
    // A bad price table fails `cdk synth`, not a cold start.
    if (props.modelPrices !== undefined) modelPricesFromEnv({ MODEL_PRICES: props.modelPrices });
    const { stateful } = props.stateful;
    const resources: GrantableResources = {
      tables: stateful.tables,
      queues: props.stateful.queues,
      sessionSigningKey: stateful.sessionSigningKey,
      model: modelResource(props.model, stateful.anthropicApiKey),
      webhookSecretKey: stateful.webhookSecretKey,
      eventBus: stateful.eventBus,
      defaultSynthesisHandler: props.defaultSynthesisHandler,
      synthesisRunsPerTeamPerHour: props.limits.synthesisRunsPerTeamPerHour,
      ...(props.modelPrices !== undefined ? { modelPrices: props.modelPrices } : {}),
      ...(props.recordShards !== undefined ? { recordShards: props.recordShards } : {}),
      evaluationRoutes: evaluationPaths(props.operations),
    };
    const settings: FunctionSettings = {
      tracing: props.lambdaTracing,
      removalPolicy: props.stage.removalPolicy,
      logLevel: 'INFO',
    };

    this.api = new Api(this, 'Api', {
      stageName: props.stage.name,
      resources,
      settings,
      limits: props.limits,
      evaluationPaths: evaluationPaths(props.operations),
    });
    // The review app this API serves at /app (operations/serve-app.ts), unless the stack names another.
    const appUrl = props.email.appUrl ?? `${this.api.stageUrl(props.stage.name)}/app`;
    this.jobs = new Jobs(new NestedStack(this, 'Jobs'), 'Jobs', {
      handlers: HANDLERS.filter((handler) => !('authorizer' in handler.trigger)),
      resources: { ...resources, appUrl, evaluationPlanId: this.api.evaluationPlan.usagePlanId },
      settings,
    });
    this.routeFunctions = this.createRouteFunctions(
      props,
      {
        ...resources,
        email: {
          from: props.email.from,
          identity: props.email.identity,
          // Magic links open the review application.
          appUrl,
        },
      },
      settings,
    );
    this.api.addOperations(props.operations, this.routeFunctions);

    const worker = this.jobs.functions.get(SYNTHESIS_WORKER.entry);
    if (!worker) throw new Error('The background functions have no synthesis worker.');
    const monitorJudge = this.jobs.functions.get(MONITOR_JUDGE.entry);
    if (!monitorJudge) throw new Error("The background functions have no monitors' judge.");
    // Alarms and the dashboard in a nested stack of their own: the API's methods, their permissions
    // and paths keep the service template's room for more operations.
    this.operations = new Operations(new NestedStack(this, 'Monitoring'), 'Operations', {
      restApi: this.api.restApi,
      authorizer: this.api.authorizerFunction.function,
      worker: worker.function,
      monitorJudge: monitorJudge.function,
      queues: props.stateful.queues,
      topic: props.stateful.alarmTopic,
    });
    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url });
    // What makes a team's usage key (`npm run bootstrap` on AWS) puts it on this plan.
    new CfnOutput(this, 'EvaluationUsagePlanId', { value: this.api.evaluationPlan.usagePlanId });
  }

  /** The operations' functions, each group in a nested stack of its own. */
  private createRouteFunctions(
    props: ServiceStackProps,
    resources: GrantableResources,
    settings: FunctionSettings,
  ): ReadonlyMap<string, ServiceFunction> {
    const definitions = operationFunctions(props.operations);
    const functions = new Map<string, ServiceFunction>();
    for (const group of ROUTE_GROUPS) {
      const members = definitions.filter((definition) => routeGroupOf(definition) === group);
      if (members.length === 0) continue;
      const routes = new RouteFunctions(new NestedStack(this, group), 'Routes', {
        functions: members,
        resources,
        settings,
      });
      for (const [module, fn] of routes.functions) functions.set(module, fn);
    }
    return functions;
  }
}
