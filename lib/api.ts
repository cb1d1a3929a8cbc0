/**
 * The REST API construct: the stage, its access logs and web ACL, the gateway's own error
 * responses, the authorizer, and one method per operation proxying to its module's function.
 */

import { createHash } from 'node:crypto';
import { Aws, Duration, Names, NestedStack, Stack } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKey,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  Integration,
  IntegrationType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { AUTHORIZER } from '../lambdas/functions.ts';
import { BINARY_MEDIA_TYPES } from '../lambdas/http/binary-media.ts';
import type { AbuseLimits } from '../lambdas/limits.ts';
import { moduleOf, type OperationDeclaration } from '../lambdas/operations/declaration.ts';
import { handlerEntryPath } from './bundling.ts';
import { GATEWAY_ERRORS, gatewayErrorBody, gatewayResponseHeaders } from './gateway-errors.ts';
import { acknowledgeNag } from './nag.ts';
import { pascalCase } from './names.ts';
import { RateLimits } from './rate-limits.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

export interface ApiProps {
  readonly stageName: string;
  /** What the authorizer may be granted. */
  readonly resources: GrantableResources;
  readonly settings: FunctionSettings;
  readonly limits: AbuseLimits;
  /** The path templates of the evaluation operations (declaration.ts evaluationPaths). */
  readonly evaluationPaths: readonly string[];
}

/**
 * The shared evaluation key's value: derived at synthesis from the API construct's unique id (its
 * stack's and its path), so each stack has its own and every synthesis the same. It need not be
 * secret: with the authorizer as the key source no request can present a key, this one included.
 * API Gateway wants at least 20 characters; this is 19 + 40.
 */
export function sharedEvaluationKeyValue(api: Construct): string {
  const digest = createHash('sha256').update(Names.uniqueId(api)).digest('hex');
  return `shared-evaluations-${digest.slice(0, 40)}`;
}

/** One JSON line per request; no headers, so no credential ever reaches the logs. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    requestTime: AccessLogField.contextRequestTime(),
    ip: AccessLogField.contextIdentitySourceIp(),
    userAgent: AccessLogField.contextIdentityUserAgent(),
    method: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    responseLatency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    principalId: AccessLogField.contextAuthorizerPrincipalId(),
    authorizerError: AccessLogField.contextAuthorizerError(),
    errorMessage: AccessLogField.contextErrorMessage(),
    integrationError: AccessLogField.contextIntegrationErrorMessage(),
  }),
);

/** The REST API: one method per operation (addOperations), behind one authorizer. */
export class Api extends Construct {
  readonly restApi: RestApi;
  readonly rateLimits: RateLimits;
  /**
   * The evaluation rate per team: every team's API key (lambdas/auth/usage-keys.ts) is on this plan,
   * whose throttle each key gets for itself, and the authorizer names the caller's team's key
   * (`usageIdentifierKey`) on the evaluation methods, the only ones that require a key.
   */
  readonly evaluationPlan: UsagePlan;
  /**
   * The plan's one shared key, which the authorizer names for a team that has no key of its own
   * yet (before the deploy's backfill reaches it, or past the account's key quota): such teams
   * share its bucket rather than being refused.
   */
  readonly sharedEvaluationKey: ApiKey;
  readonly authorizerFunction: ServiceFunction;
  private readonly authorizer: RequestAuthorizer;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.settings.removalPolicy,
    });
    this.restApi = new RestApi(this, 'RestApi', {
      description: 'Pipeline Synthesis API',
      endpointTypes: [EndpointType.REGIONAL],
      // Compresses answers above 1 KB for clients that accept it: the review application's script
      // (web/, served from /app/assets/) travels gzipped, as `npm run bench` measures it.
      minimumCompressionSize: 1024,
      // OTLP's protobuf (and gzipped JSON) reach the functions as base64 bytes, not mangled text.
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      // A method that requires an API key takes it from the authorizer's answer, never from the
      // request: a caller cannot name another team's key, or any key at all.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // API Gateway writes access and execution logs through one account-wide role: the stateful
      // stack's (lib/api-gateway-account.ts), which outlives this stack.
      cloudWatchRole: false,
      deployOptions: {
        stageName: props.stageName,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // Execution logs for errors only; never data traces, which would log the Authorization
        // header, session cookies and request bodies.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // Stage-wide, all callers together; fair sharing is the web ACL's per-credential rules and
        // the evaluation plan's per-team throttle.
        throttlingRateLimit: props.limits.stageRequestsPerSecond,
        throttlingBurstLimit: props.limits.stageBurst,
        tracingEnabled: true,
        metricsEnabled: true,
      },
    });
    this.acknowledgeApiFindings();
    this.rateLimits = new RateLimits(this, 'RateLimits', {
      stageArn: this.restApi.deploymentStage.stageArn,
      stageName: props.stageName,
      limits: props.limits,
      evaluationPaths: props.evaluationPaths,
    });
    // The evaluation plan with its shared key, in a nested stack of their own: the service template
    // keeps its room for more operations' methods, permissions and paths.
    const throttles = new NestedStack(this, 'EvaluationPlan');
    this.evaluationPlan = new UsagePlan(throttles, 'EvaluationsPerTeam', {
      description:
        'Evaluations (serving-configuration, OFREP) per team: one API key a team, named by the authorizer',
      throttle: {
        rateLimit: props.limits.servingRequestsPerSecondPerTeam,
        burstLimit: props.limits.servingBurstPerTeam,
      },
      apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
    });
    const sharedKeyValue = sharedEvaluationKeyValue(this);
    this.sharedEvaluationKey = new ApiKey(throttles, 'SharedEvaluationKey', {
      description: 'Evaluations of the teams that have no key of their own yet (named by the authorizer)',
      value: sharedKeyValue,
      enabled: true,
    });
    this.evaluationPlan.addApiKey(this.sharedEvaluationKey);

    for (const gatewayError of GATEWAY_ERRORS) {
      this.restApi.addGatewayResponse(`GatewayResponse${pascalCase(gatewayError.type)}`, {
        type: ResponseType.of(gatewayError.type),
        statusCode: gatewayError.statusCode,
        // Gateway response header values are static when quoted.
        responseHeaders: Object.fromEntries(
          Object.entries(gatewayResponseHeaders(gatewayError)).map(([name, value]) => [name, `'${value}'`]),
        ),
        templates: { 'application/json': gatewayErrorBody(gatewayError) },
      });
    }

    this.authorizerFunction = new ServiceFunction(this, 'Authorizer', {
      entryFile: handlerEntryPath(AUTHORIZER.entry),
      access: AUTHORIZER.access,
      trigger: AUTHORIZER.trigger,
      resources: { ...props.resources, evaluationFallbackKey: sharedKeyValue },
      settings: props.settings,
      description: AUTHORIZER.description,
      timeout: Duration.seconds(AUTHORIZER.timeoutSeconds),
    });

    this.authorizer = new RequestAuthorizer(this, 'RequestAuthorizer', {
      handler: this.authorizerFunction.function,
      // No identity source and no result cache. With an identity source (say the Authorization
      // header) API Gateway would answer 401 itself when that header is missing, so a request
      // carrying only session cookies would never reach the authorizer; a cache would keep
      // allowing a revoked token or an ended session until its TTL ran out.
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });
  }

  /** A method per operation, proxying to the function of its module (by module name). */
  addOperations(
    operations: readonly OperationDeclaration[],
    functions: ReadonlyMap<string, ServiceFunction>,
  ): void {
    for (const operation of operations) {
      const fn = functions.get(moduleOf(operation));
      if (!fn) throw new Error(`No function for the module of ${operation.name}.`);
      this.addOperation(operation, fn);
    }
  }

  /** Functions given their invoke permission (once each, whatever the number of their methods). */
  private readonly permitted = new Set<ServiceFunction>();

  /**
   * A Lambda proxy integration of the function. Its invoke permission is the function's own, in the
   * function's (nested) stack, scoped to this API: any of the API's methods may invoke a function
   * that a method's integration names, and only those do. LambdaIntegration would put one
   * permission per method in this stack, whose 500 resources every operation takes from.
   */
  private integrationOf(fn: ServiceFunction): Integration {
    if (!this.permitted.has(fn)) {
      this.permitted.add(fn);
      fn.function.addPermission('ApiGatewayInvoke', {
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: this.restApi.arnForExecuteApi(),
      });
    }
    return new Integration({
      type: IntegrationType.AWS_PROXY,
      integrationHttpMethod: 'POST',
      uri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${fn.function.functionArn}/invocations`,
    });
  }

  /** The operation's method, behind the authorizer unless the operation says why it is public. */
  private addOperation(operation: OperationDeclaration, fn: ServiceFunction): void {
    const name = `${operation.method} ${operation.path}`;
    if (operation.public !== undefined && operation.rateLimit === 'evaluation')
      throw new Error(`${name} is public, so no team's evaluation rate can count it.`);
    const method = this.restApi.root.resourceForPath(operation.path).addMethod(
      operation.method,
      this.integrationOf(fn),
      operation.public === undefined
        ? {
            authorizer: this.authorizer,
            authorizationType: AuthorizationType.CUSTOM,
            // Counted by the evaluation plan against the key of the caller's team.
            apiKeyRequired: operation.rateLimit === 'evaluation',
          }
        : { authorizationType: AuthorizationType.NONE },
    );
    if (operation.public === undefined) {
      acknowledgeNag(
        method,
        'AwsSolutions-COG4',
        'Callers authenticate with API tokens and session cookies that the Lambda REQUEST authorizer checks against the auth table; there is no Cognito user pool.',
      );
      return;
    }
    const reason = `Public by design: ${operation.public}`;
    acknowledgeNag(method, 'AwsSolutions-APIG4', `${name}: ${reason}`);
    acknowledgeNag(
      method,
      'AwsSolutions-COG4',
      `${name} takes no credential, so it has no authorizer of any kind, Cognito or Lambda. ${reason}`,
    );
  }

  /**
   * The stage's base URL, built from the API id and the literal stage name: `restApi.url` refers to
   * the stage, which depends on the deployment, which depends on every method, which depends on
   * the functions, so a function environment holding it would be a dependency cycle.
   */
  stageUrl(stageName: string): string {
    const stack = Stack.of(this);
    return `https://${this.restApi.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${stageName}`;
  }

  private acknowledgeApiFindings(): void {
    acknowledgeNag(
      this.restApi,
      'AwsSolutions-APIG2',
      'Every operation parses its path, query, headers and body with the zod schemas of its declaration and answers 400 VALIDATION_ERROR with details; an API Gateway request validator would duplicate those schemas and answer in another shape.',
    );
  }
}
