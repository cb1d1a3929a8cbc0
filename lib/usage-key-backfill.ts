/**
 * The deploy's backfill of usage keys: a custom resource whose function gives every team without
 * a key on the evaluation plan its key (lambdas/handlers/provision-usage-keys.ts), in passes the
 * Provider framework repeats until done, so thousands of teams fit. Its properties change on every
 * synthesis, so every deploy runs it (a team whose key the bootstrap could not make gets it then),
 * and so does a replaced service stack's new plan. Until it reaches a team, that team's
 * evaluations share the stack's fallback key (lib/api.ts): the backfill is never in a request's way.
 */
import { randomUUID } from 'node:crypto';
import { CustomResource, Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
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
    this.provider = new Provider(this, 'Provider', {
      onEventHandler: props.handler,
      isCompleteHandler: props.handler,
      queryInterval: Duration.seconds(QUERY_INTERVAL_SECONDS),
      // CloudFormation waits at most this long; each pass stops before its function's timeout.
      totalTimeout: Duration.hours(2),
      logGroup: new LogGroup(this, 'ProviderLogs', {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: props.settings.removalPolicy,
      }),
    });
    this.resource = new CustomResource(this, 'Backfill', {
      serviceToken: this.provider.serviceToken,
      resourceType: 'Custom::UsageKeyBackfill',
      // A new value on every synthesis: CloudFormation updates the resource, so each deploy runs it.
      properties: { usagePlanId: props.usagePlanId, deployment: randomUUID() },
    });
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
