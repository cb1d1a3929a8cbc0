/**
 * The deploy's backfill of usage keys: a custom resource whose function gives every team without
 * a key on the evaluation plan its key (lambdas/handlers/provision-usage-keys.ts), in passes the
 * Provider framework repeats until done, so thousands of teams fit. Its properties change on every
 * synthesis, so every deploy runs it (a team whose key the bootstrap could not make gets it then),
 * and so does a replaced service stack's new plan. Until it reaches a team, that team's
 * evaluations share the stack's fallback key (lib/api.ts): the backfill is never in a request's way.
 */
import { randomUUID } from 'node:crypto';
import { CfnElement, CustomResource, Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct, type IConstruct } from 'constructs';
import { acknowledgeNag } from './nag.ts';
import type { FunctionSettings } from './service-function.ts';

/** Seconds between two passes of the backfill while teams are left. */
const QUERY_INTERVAL_SECONDS = 30;

export interface UsageKeyBackfillProps {
  /** The evaluation plan's id: the keys go there. */
  readonly usagePlanId: string;
  /** The function of the provision-usage-keys handler (its access: the team items, this plan's keys). */
  readonly handler: IFunction;
  readonly settings: FunctionSettings;
}

export class UsageKeyBackfill extends Construct {
  readonly provider: Provider;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: UsageKeyBackfillProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'ProviderLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.settings.removalPolicy,
    });
    // Roles of our own for the framework's functions instead of AWSLambdaBasicExecutionRole, which
    // may write to every log group of the account: these write to the framework's only. Two, as the
    // framework wants: onEvent's starts the waiter, which calls isComplete, so one role for both
    // would make a dependency cycle.
    const frameworkRole = (roleId: string) => {
      const role = new Role(this, roleId, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      logGroup.grantWrite(role);
      return role;
    };
    const onEventRole = frameworkRole('FrameworkOnEventRole');
    const completeRole = frameworkRole('FrameworkCompleteRole');
    this.provider = new Provider(this, 'Provider', {
      onEventHandler: props.handler,
      isCompleteHandler: props.handler,
      queryInterval: Duration.seconds(QUERY_INTERVAL_SECONDS),
      // CloudFormation waits at most this long; each pass stops before its function's timeout.
      totalTimeout: Duration.hours(2),
      frameworkOnEventRole: onEventRole,
      frameworkCompleteAndTimeoutRole: completeRole,
      logGroup,
      // The framework's functions log each step; the waiter's own log would hold CloudFormation's
      // presigned response URL and needs logs:* on "*".
      disableWaiterStateMachineLogging: true,
    });
    this.acknowledgeFrameworkFindings([onEventRole, completeRole], props.handler);
    this.resource = new CustomResource(this, 'Backfill', {
      serviceToken: this.provider.serviceToken,
      resourceType: 'Custom::UsageKeyBackfill',
      // A new value on every synthesis: CloudFormation updates the resource, so each deploy runs it.
      properties: { usagePlanId: props.usagePlanId, deployment: randomUUID() },
    });
  }

  /** What cdk-nag finds in CDK's own Provider framework, acknowledged where it is. */
  private acknowledgeFrameworkFindings(frameworkRoles: readonly Role[], handler: IFunction): void {
    const waiter = this.provider.node.findChild('waiter-state-machine');
    const invoked: ReadonlyArray<[IConstruct, IConstruct]> = [
      ...frameworkRoles.map((role): [IConstruct, IConstruct] => [role, handler]),
      [waiter, this.provider.node.findChild('framework-isComplete')],
      [waiter, this.provider.node.findChild('framework-onTimeout')],
    ];
    // The finding names the function by its logical id, known once the tree is validated.
    this.node.addValidation({
      validate: () => {
        for (const [scope, fn] of invoked) {
          const element = fn.node.defaultChild;
          if (!(element instanceof CfnElement)) continue;
          const logicalId = Stack.of(element).resolve(Stack.of(element).getLogicalId(element)) as string;
          acknowledgeNag(
            scope,
            `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
            `The Provider framework invokes ${fn.node.id} by its ARN and its versions (<function ARN>:*), CDK's own grant; the wildcard names that one function's versions only.`,
          );
        }
        return [];
      },
    });
    acknowledgeNag(
      waiter,
      'AwsSolutions-SF1',
      "The Provider framework's waiter only calls isComplete again every 30 s; the backfill and the framework's functions log every pass, and the waiter's execution data would hold CloudFormation's presigned response URL.",
    );
    acknowledgeNag(
      waiter,
      'AwsSolutions-SF2',
      "The Provider framework's waiter is CDK's own state machine with no tracing option; it runs during deploys only, and the backfill function it calls is traced with the rest of the service.",
    );
  }
}

/**
 * What making and finding a team's key takes, and nothing else: create API keys and list them (the
 * name look-up of an interrupted attempt's key) on `/apikeys`, and add keys to the plan
 * `usagePlanId` only. API keys are the account's, not the API's, so creating one cannot be narrowed
 * further than `/apikeys`; neither statement reaches another plan, a stage or an API.
 */
export function grantUsageKeys(fn: IFunction, usagePlanId: string): void {
  const stack = Stack.of(fn);
  const arn = (path: string) => `arn:${stack.partition}:apigateway:${stack.region}::${path}`;
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['apigateway:GET', 'apigateway:POST'], resources: [arn('/apikeys')] }),
  );
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['apigateway:POST'],
      resources: [arn(`/usageplans/${usagePlanId}/keys`)],
    }),
  );
}
