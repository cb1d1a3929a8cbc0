import { CfnElement, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { accessEnvironment, tableAccess } from '../lambdas/function-environment.ts';
import {
  DEFAULT_MEMORY_MB,
  type FunctionAccess,
  HTTP_FUNCTION_TIMEOUT_SECONDS,
  type TableAccess,
} from '../lambdas/functions.ts';
import { API_TOKEN_PARTITION_PREFIX } from '../lambdas/store/auth/keys.ts';
import { AUTH_TABLE, TABLE_DEFINITIONS, type TableDefinition } from '../lambdas/store/table-definitions.ts';
import { DEPS_LOCK_FILE, LAMBDA_BUNDLING, REPO_ROOT, splitBuildCommand } from './bundling.ts';
import { type EmailSettings, sesIdentityArn } from './email.ts';
import { acknowledgeNag } from './nag.ts';

export { SERVICE_NAME } from './names.ts';

import { SERVICE_NAME } from './names.ts';

/** The stateful resources a function may be granted, as FunctionAccess names them. */
export interface GrantableResources {
  readonly tables: ReadonlyMap<TableDefinition['id'], ITable>;
  readonly synthesisQueue: IQueue;
  /** The data-lifecycle queue (deletion jobs); needed by `sendsLifecycleJobs` / `consumesLifecycleJobs` functions. */
  readonly lifecycleQueue?: IQueue;
  /** The guardrail queue (rollouts to judge); needed by `sendsGuardrailChecks` / `consumesGuardrailChecks` functions. */
  readonly guardrailQueue?: IQueue;
  /** The HMAC key that signs session tokens (`sessionSecret`). */
  readonly sessionSigningKey: ISecret;
  /** Absent where no function sends email; a `sendsEmail` function then fails to synthesize. */
  readonly email?: EmailSending;
  /** The Anthropic API key secret; absent where no function calls the model. */
  readonly anthropicApiKey?: ISecret;
  /** DEFAULT_SYNTHESIS_HANDLER of the functions that start runs. */
  readonly defaultSynthesisHandler?: string;
  /** SYNTHESIS_RUNS_PER_TEAM_PER_HOUR of the functions that start runs. */
  readonly synthesisRunsPerTeamPerHour?: number;
  /** The webhook queue, the key sealing webhook secrets and the event bus. */
  readonly webhooks?: { readonly queue: IQueue; readonly secretKey: ISecret; readonly eventBus: IEventBus };
}

/** What a `sendsEmail` function gets: the settings with APP_URL resolved. */
export type EmailSending = Required<EmailSettings>;

/** Settings every function of a stack shares. */
export interface FunctionSettings {
  readonly tracing: boolean;
  /** For the function's log group. */
  readonly removalPolicy: RemovalPolicy;
  readonly logLevel: string;
}

export interface ServiceFunctionProps {
  /** The module Lambda runs (its `handler` export): an operation module or a file in lambdas/handlers. */
  readonly entryFile: string;
  readonly access: FunctionAccess;
  readonly resources: GrantableResources;
  readonly settings: FunctionSettings;
  readonly description: string;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  /** Shell commands run (in the repository root) right before esbuild bundles the entry. */
  readonly beforeBundling?: readonly string[];
  /**
   * Modules the handler imports on demand, by output name (lib/bundling.ts onDemandParts): the
   * function is then bundled with code splitting, each part a file next to index.mjs.
   */
  readonly onDemandParts?: Readonly<Record<string, string>>;
}

/**
 * One Lambda of the service with the defaults every function shares (Node 24 on Graviton, ESM
 * bundle from lib/bundling.ts, one-month logs), and exactly the access its row in
 * lambdas/functions.ts or its operation declaration names: grants on the tables and the queue, and their names and URL as
 * environment variables, the session signing key, the SES sender identity, the narrow token-use
 * write. Anything else (the worker's Anthropic key, event sources) the caller adds with grants.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { settings } = props;

    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: settings.removalPolicy,
    });
    // An own role instead of the AWSLambdaBasicExecutionRole managed policy, which may write to
    // every log group of the account: this one may only write to the function's own.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entryFile,
      projectRoot: REPO_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(HTTP_FUNCTION_TIMEOUT_SECONDS),
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      role: this.role,
      logGroup,
      tracing: settings.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      environment: {
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        LOG_LEVEL: settings.logLevel,
        ...(LAMBDA_BUNDLING.sourceMap ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
      bundling: {
        format: OutputFormat.ESM,
        target: LAMBDA_BUNDLING.target,
        minify: LAMBDA_BUNDLING.minify,
        sourceMap: LAMBDA_BUNDLING.sourceMap,
        mainFields: [...LAMBDA_BUNDLING.mainFields],
        banner: LAMBDA_BUNDLING.banner,
        externalModules: [...LAMBDA_BUNDLING.externalModules],
        // Local bundling runs esbuild in projectRoot (REPO_ROOT), where the relative paths resolve.
        esbuildArgs: {
          '--alias': Object.entries(LAMBDA_BUNDLING.alias).map(([name, target]) => `${name}=${target}`),
        },
        bundleAwsSDK: true,
        // There is no Docker here, and esbuild from node_modules gives the same bundle.
        forceDockerBundling: false,
        ...commandHooks(props),
      },
    });

    if (settings.tracing) {
      acknowledgeNag(
        this.role,
        'AwsSolutions-IAM5[Resource::*]',
        'Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions; every other statement of this role names its resources.',
      );
    }
    this.grantAccess(props.access, props.resources);
  }

  private grantAccess(access: FunctionAccess, resources: GrantableResources): void {
    const tableNames = {} as Record<TableDefinition['id'], string>;
    for (const definition of TABLE_DEFINITIONS) {
      const table = resources.tables.get(definition.id);
      if (table) tableNames[definition.id] = table.tableName;
      const level = tableAccess(access, definition.id);
      if (!level) continue;
      if (!table) throw new Error(`No table '${definition.id}' to grant to ${this.node.path}.`);
      grantTable(table, this.function, level);
      if (definition.indexes.length > 0) this.acknowledgeIndexWildcard(table);
    }
    // The SQS event source of a `consumesJobs` function grants receive, delete and
    // ChangeMessageVisibility; the worker needs the URL to hide a failed job for a backoff.
    if (access.sendJobs) resources.synthesisQueue.grantSendMessages(this.function);
    // The deletion job queues its own next step, so a consumer sends too.
    if (access.sendsLifecycleJobs || access.consumesLifecycleJobs) {
      if (!resources.lifecycleQueue) throw new Error(`${this.node.path} needs the lifecycle queue.`);
      resources.lifecycleQueue.grantSendMessages(this.function);
    }
    if (access.sendsGuardrailChecks || access.consumesGuardrailChecks) {
      if (!resources.guardrailQueue) throw new Error(`${this.node.path} needs the guardrail queue.`);
      if (access.sendsGuardrailChecks) resources.guardrailQueue.grantSendMessages(this.function);
      // The SQS event source grants receive and delete; hiding a failed check for a backoff needs this.
      if (access.consumesGuardrailChecks)
        resources.guardrailQueue.grant(this.function, 'sqs:ChangeMessageVisibility');
    }
    // The ARN only: the handler reads the key from Secrets Manager, never from its environment.
    if (access.sessionSecret) resources.sessionSigningKey.grantRead(this.function);
    if (access.sendsEmail) this.grantSendEmail(resources.email);
    if (access.recordsTokenUse) this.grantRecordTokenUse(resources);
    if (access.webhookSecretKey || access.fansOutEvents || access.deliversWebhooks) {
      if (!resources.webhooks)
        throw new Error(`${this.node.path} handles webhooks, but no webhook resources were given.`);
      if (access.webhookSecretKey) resources.webhooks.secretKey.grantRead(this.function);
      if (access.fansOutEvents) {
        resources.webhooks.queue.grantSendMessages(this.function);
        resources.webhooks.eventBus.grantPutEventsTo(this.function);
      }
      // The SQS event source grants receive and delete; hiding a failed delivery needs this.
      if (access.deliversWebhooks)
        resources.webhooks.queue.grant(this.function, 'sqs:ChangeMessageVisibility');
    }
    if (access.callsModel) {
      if (!resources.anthropicApiKey)
        throw new Error(`${this.node.path} calls the model, but no API key secret was given.`);
      resources.anthropicApiKey.grantRead(this.function);
    }
    const environment = accessEnvironment(access, {
      tableNames,
      synthesisQueueUrl: resources.synthesisQueue.queueUrl,
      ...(resources.lifecycleQueue ? { lifecycleQueueUrl: resources.lifecycleQueue.queueUrl } : {}),
      ...(resources.guardrailQueue ? { guardrailQueueUrl: resources.guardrailQueue.queueUrl } : {}),
      sessionSecret: { SESSION_SECRET_ARN: resources.sessionSigningKey.secretArn },
      ...(resources.email
        ? { email: { EMAIL_FROM: resources.email.from, APP_URL: resources.email.appUrl } }
        : {}),
      ...(resources.anthropicApiKey
        ? { model: { ANTHROPIC_SECRET_ARN: resources.anthropicApiKey.secretArn } }
        : {}),
      ...(resources.defaultSynthesisHandler
        ? { defaultSynthesisHandler: resources.defaultSynthesisHandler }
        : {}),
      ...(resources.synthesisRunsPerTeamPerHour
        ? { synthesisRunsPerTeamPerHour: resources.synthesisRunsPerTeamPerHour }
        : {}),
      ...(resources.webhooks
        ? {
            webhooks: {
              queueUrl: resources.webhooks.queue.queueUrl,
              secretKey: { WEBHOOK_SECRET_KEY_ARN: resources.webhooks.secretKey.secretArn },
              eventBusName: resources.webhooks.eventBus.eventBusName,
            },
          }
        : {}),
    });
    for (const [name, value] of Object.entries(environment)) this.function.addEnvironment(name, value);
  }

  private grantSendEmail(email: EmailSending | undefined): void {
    if (!email) throw new Error(`${this.node.path} sends email, but no email settings were given.`);
    // Hand-written because SES identities have no L2 construct with a grant method. The statement
    // names the one sender identity: the function cannot send as any other verified identity of
    // the account. (While the account is in the SES sandbox, SES also checks the recipient's
    // identity; production access removes that, and this stack does not widen the grant for it.)
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [sesIdentityArn(this, email.identity)],
      }),
    );
  }

  /**
   * The authorizer records when an API token was last used (lambdas/store/auth/api-tokens.ts touchApiToken:
   * `SET lastUsedAt` on `APITOKEN#<hash>` items, no return values). Hand-written because no grant
   * method limits a write to some items and attributes: the conditions confine UpdateItem to API
   * token items and to the lastUsedAt attribute, so the authorizer cannot change a token's owner,
   * team or revocation, nor touch users, sessions or memberships.
   */
  private grantRecordTokenUse(resources: GrantableResources): void {
    const table = resources.tables.get(AUTH_TABLE.id);
    if (!table) throw new Error(`No table '${AUTH_TABLE.id}' to grant to ${this.node.path}.`);
    const keyAttributes = [AUTH_TABLE.partitionKey, ...(AUTH_TABLE.sortKey ? [AUTH_TABLE.sortKey] : [])];
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${API_TOKEN_PARTITION_PREFIX}*`] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...keyAttributes, 'lastUsedAt'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
    );
  }

  /** Table grants cover `<table ARN>/index/*` so Query can use the table's own GSIs. */
  private acknowledgeIndexWildcard(table: ITable): void {
    const cfnTable = table.node.defaultChild;
    if (!(cfnTable instanceof CfnElement))
      throw new Error(`${table.node.path} is not a table of this stack.`);
    const logicalId = Stack.of(cfnTable).getLogicalId(cfnTable);
    acknowledgeNag(
      this.role,
      `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      `The grant on ${logicalId} includes its global secondary indexes (<table ARN>/index/*) so the function can Query them; the wildcard matches indexes of this one table only.`,
    );
  }
}

/**
 * The bundling hooks of a function: its `beforeBundling` commands, and for a function with on-demand
 * parts a code-splitting esbuild run that replaces NodejsFunction's single index.mjs (NodejsFunction
 * bundles one file with `--outfile`, which esbuild's splitting does not accept).
 */
function commandHooks(props: ServiceFunctionProps) {
  const parts = props.onDemandParts ?? {};
  const split = Object.keys(parts).length > 0;
  if (!props.beforeBundling && !split) return {};
  return {
    commandHooks: {
      beforeBundling: () => [...(props.beforeBundling ?? [])],
      beforeInstall: () => [],
      afterBundling: (_inputDir: string, outputDir: string) =>
        split ? [splitBuildCommand(props.entryFile, parts, outputDir)] : [],
    },
  };
}

function grantTable(table: ITable, fn: NodejsFunction, level: TableAccess): void {
  if (level === 'readWrite') table.grantReadWriteData(fn);
  else if (level === 'write') table.grantWriteData(fn);
  else table.grantReadData(fn);
}
