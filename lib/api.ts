/**
 * The REST API construct: the stage, its access logs and web ACL, the gateway's own error
 * responses, the authorizer and one method and function per operation.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { AUTHORIZER } from '../lambdas/functions.ts';
import type { AbuseLimits } from '../lambdas/limits.ts';
import type { OperationDeclaration } from '../lambdas/operations/declaration.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { buildScriptCommand, handlerEntryPath, onDemandParts, operationEntryPath } from './bundling.ts';
import type { EmailSettings } from './email.ts';
import { GATEWAY_ERRORS, gatewayErrorBody, gatewayResponseHeaders } from './gateway-errors.ts';
import { acknowledgeNag } from './nag.ts';
import { RateLimits } from './rate-limits.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

export interface ApiProps {
  readonly stageName: string;
  /** The API's operations (lambdas/operations/index.ts): a method per operation, a function per module. */
  readonly operations: readonly OperationDeclaration[];
  readonly resources: GrantableResources;
  /** For the `sendsEmail` functions; without `appUrl`, magic links open this API's `/app`. */
  readonly email: EmailSettings;
  readonly settings: FunctionSettings;
  /** Handler a synthesis request gets when its body names none. */
  readonly defaultSynthesisHandler: string;
  readonly limits: AbuseLimits;
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

/** The REST API: one method per operation and one Lambda per operation module, behind one authorizer. */
export class Api extends Construct {
  readonly restApi: RestApi;
  readonly rateLimits: RateLimits;
  readonly authorizerFunction: ServiceFunction;
  /** The operations' functions by their module name. */
  readonly operationFunctions: ReadonlyMap<string, ServiceFunction>;

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
      // API Gateway writes access and execution logs through one account-wide role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: props.stageName,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // Execution logs for errors only; never data traces, which would log the Authorization
        // header, session cookies and request bodies.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // Stage-wide, all callers together; fair sharing is the web ACL's per-credential rules.
        throttlingRateLimit: props.limits.stageRequestsPerSecond,
        throttlingBurstLimit: props.limits.stageBurst,
        tracingEnabled: true,
        metricsEnabled: true,
      },
    });
    this.acknowledgeApiFindings();
    this.rateLimits = new RateLimits(this, 'RateLimits', {
      stageArn: this.restApi.deploymentStage.stageArn,
      limits: props.limits,
    });

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

    const resources: GrantableResources = {
      ...props.resources,
      defaultSynthesisHandler: props.defaultSynthesisHandler,
      synthesisRunsPerTeamPerHour: props.limits.synthesisRunsPerTeamPerHour,
      email: {
        from: props.email.from,
        identity: props.email.identity,
        // Magic links open the review application this API serves at /app (operations/serve-app.ts).
        appUrl: props.email.appUrl ?? `${this.stageUrl(props.stageName)}/app`,
      },
    };

    this.authorizerFunction = new ServiceFunction(this, 'Authorizer', {
      entryFile: handlerEntryPath(AUTHORIZER.entry),
      access: AUTHORIZER.access,
      resources,
      settings: props.settings,
      description: 'API Gateway REQUEST authorizer: API tokens and sessions',
      timeout: Duration.seconds(AUTHORIZER.timeoutSeconds),
    });

    const authorizer = new RequestAuthorizer(this, 'RequestAuthorizer', {
      handler: this.authorizerFunction.function,
      // No identity source and no result cache. With an identity source (say the Authorization
      // header) API Gateway would answer 401 itself when that header is missing, so a request
      // carrying only session cookies would never reach the authorizer; a cache would keep
      // allowing a revoked token or an ended session until its TTL ran out.
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });

    const functions = new Map<string, ServiceFunction>();
    const functionsScope = new Construct(this, 'Routes');
    for (const definition of operationFunctions(props.operations)) {
      const fn = new ServiceFunction(functionsScope, pascalCase(definition.module), {
        entryFile: operationEntryPath(definition.module),
        access: definition.access,
        resources,
        settings: props.settings,
        description: definition.operations
          .map((operation) => `${operation.method} ${operation.path}`)
          .join(', '),
        memorySize: definition.memoryMb,
        timeout: Duration.seconds(definition.timeoutSeconds),
        beforeBundling: definition.buildsFirst.map(buildScriptCommand),
        onDemandParts: onDemandParts(definition.module),
      });
      functions.set(definition.module, fn);
      for (const operation of definition.operations) this.addOperation(operation, fn, authorizer);
    }
    this.operationFunctions = functions;
  }

  /** The operation's method, behind the authorizer unless the operation says why it is public. */
  private addOperation(
    operation: OperationDeclaration,
    fn: ServiceFunction,
    authorizer: RequestAuthorizer,
  ): void {
    const name = `${operation.method} ${operation.path}`;
    const method = this.restApi.root
      .resourceForPath(operation.path)
      .addMethod(
        operation.method,
        new LambdaIntegration(fn.function),
        operation.public === undefined
          ? { authorizer, authorizationType: AuthorizationType.CUSTOM }
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
  private stageUrl(stageName: string): string {
    const stack = Stack.of(this);
    return `https://${this.restApi.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${stageName}`;
  }

  private acknowledgeApiFindings(): void {
    acknowledgeNag(
      this.restApi,
      'AwsSolutions-APIG2',
      'Every operation parses its path, query, headers and body with the zod schemas of its declaration and answers 400 VALIDATION_ERROR with details; an API Gateway request validator would duplicate those schemas and answer in another shape.',
    );
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (!cloudWatchRole) throw new Error('RestApi created no CloudWatchRole.');
    acknowledgeNag(
      cloudWatchRole,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "API Gateway's account-level logging role needs exactly this AWS-managed policy (AWS's documented setup); only apigateway.amazonaws.com can assume the role.",
    );
  }
}

/** `get-synthesis-run` → `GetSynthesisRun`, `DEFAULT_4XX` → `Default4xx`. */
export function pascalCase(name: string): string {
  return name
    .toLowerCase()
    .split(/[-_]/)
    .filter((part) => part.length > 0)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
