/**
 * One Lambda function of the service, built from its declared access: its role, its log group, its
 * grants and the environment variables that lead it to what it may reach.
 */
import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { CfnPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { accessEnvironment, type EnvironmentSources, tableAccess } from '../lambdas/function-environment.ts';
import {
  DEFAULT_MEMORY_MB,
  type FunctionAccess,
  type HandlerTrigger,
  HTTP_FUNCTION_TIMEOUT_SECONDS,
  type TableAccess,
} from '../lambdas/functions.ts';
import { QUEUES, type QueueName, type WorkQueueName } from '../lambdas/queues.ts';
import {
  API_TOKEN_PARTITION_PREFIX,
  apiTokenIdKey,
  teamKey,
  userPartition,
} from '../lambdas/store/auth/keys.ts';
import { PEOPLE_ATTRIBUTES } from '../lambdas/store/auth/people.ts';
import { USAGE_KEY_ATTRIBUTES } from '../lambdas/store/auth/usage-keys.ts';
import {
  AUTH_TABLE,
  DATA_TABLE,
  TABLE_DEFINITIONS,
  type TableDefinition,
} from '../lambdas/store/table-definitions.ts';
import { SERVING_VERSION_ATTRIBUTES, teamServingVersionKey } from '../lambdas/store/team-serving.ts';
import { DEPS_LOCK_FILE, LAMBDA_BUNDLING, REPO_ROOT, splitBuildCommand } from './bundling.ts';
import { type EmailSettings, sesIdentityArn } from './email.ts';
import { bedrockInvokeStatement, type ModelResource, modelEnvironment } from './model-access.ts';
import { acknowledgeNag } from './nag.ts';
import { grantUsageKeys } from './usage-key-backfill.ts';

export { SERVICE_NAME } from './names.ts';

import { SERVICE_NAME } from './names.ts';

/** The stateful resources a function may be granted, as FunctionAccess names them. */
export interface GrantableResources {
  readonly tables: ReadonlyMap<TableDefinition['id'], ITable>;
  /** Every queue of lambdas/queues.ts, by name. */
  readonly queues: ReadonlyMap<QueueName, { readonly queue: IQueue; readonly deadLetterQueue?: IQueue }>;
  /** The HMAC key that signs session tokens (`sessionSecret`). */
  readonly sessionSigningKey: ISecret;
  /** The Anthropic API key secret, or the Bedrock model to invoke (`callsModel`). */
  readonly model: ModelResource;
  /** The key sealing webhook secrets (`webhookSecretKey`). */
  readonly webhookSecretKey: ISecret;
  /** The stack's event bus (`putsEvents`). */
  readonly eventBus: IEventBus;
  /** Absent where no function sends email; a `sendsEmail` function then fails to synthesize. */
  readonly email?: EmailSending;
  /** The review app's URL, for the functions that link to it (`linksToApp`). */
  readonly appUrl?: string;
  /** MODEL_PRICES for the functions that call the model (lambdas/wiring/model-prices.ts), when set. */
  readonly modelPrices?: string;
  /** DEFAULT_SYNTHESIS_HANDLER of the functions that start runs. */
  readonly defaultSynthesisHandler?: string;
  /** SYNTHESIS_RUNS_PER_TEAM_PER_HOUR of the functions that start runs. */
  readonly synthesisRunsPerTeamPerHour?: number;
  /** RECORD_SHARDS of the functions using the data table. */
  readonly recordShards?: number;
  /** The evaluation operations' path templates, for the authorizer (`namesUsageKeys`). */
  readonly evaluationRoutes?: readonly string[];
  /** The value of the stack's shared evaluation key (lib/api.ts), for the authorizer (`namesUsageKeys`). */
  readonly evaluationFallbackKey?: string;
  /** The evaluation usage plan's id, for the function that puts teams' keys on it (`managesUsageKeys`). */
  readonly evaluationPlanId?: string;
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
  /** A handler's trigger: a queue consumer that hides failed messages gets that queue's URL and grant. */
  readonly trigger?: HandlerTrigger;
  readonly resources: GrantableResources;
  readonly settings: FunctionSettings;
  readonly description: string;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  /** Concurrency reserved for (and capping) the function; none by default. */
  readonly reservedConcurrentExecutions?: number;
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
 * lambdas/functions.ts or its operation declaration names: grants on the tables, the queues and
 * the secrets, their names, URLs and ARNs as environment variables, the SES sender identity, the
 * narrow token-use write. Its trigger (event source, schedule) is lib/jobs.ts's.
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
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
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
    this.grantAccess(props.access, props.resources, props.trigger);
    this.acknowledgeIndexWildcards();
  }

  private grantAccess(access: FunctionAccess, resources: GrantableResources, trigger?: HandlerTrigger): void {
    const tableNames = {} as Record<TableDefinition['id'], string>;
    for (const definition of TABLE_DEFINITIONS) {
      const table = resources.tables.get(definition.id);
      if (table) tableNames[definition.id] = table.tableName;
      const level = tableAccess(access, definition.id);
      if (!level) continue;
      if (!table) throw new Error(`No table '${definition.id}' to grant to ${this.node.path}.`);
      grantTable(table, this.function, level);
    }
    const queueUrls = {} as Record<WorkQueueName, string>;
    for (const queue of QUEUES) {
      if (queue.kind === 'work') queueUrls[queue.name] = this.queueOf(resources, queue.name).queueUrl;
    }
    for (const name of access.send ?? []) this.queueOf(resources, name).grantSendMessages(this.function);
    // The SQS event source grants receiving and deleting; hiding a failed message for a backoff is this.
    const consumed = trigger && 'queue' in trigger && trigger.changesVisibility ? trigger.queue : undefined;
    if (consumed) this.queueOf(resources, consumed).grant(this.function, 'sqs:ChangeMessageVisibility');
    // The ARN only: the handler reads the key from Secrets Manager, never from its environment.
    if (access.sessionSecret) resources.sessionSigningKey.grantRead(this.function);
    if (access.sendsEmail) this.grantSendEmail(resources.email);
    if (access.recordsTokenUse) this.grantRecordTokenUse(resources);
    if (access.keepsUsageKeys) this.grantKeepUsageKeys(resources);
    if (access.managesUsageKeys) {
      if (resources.evaluationPlanId === undefined)
        throw new Error(`No evaluation usage plan to grant to ${this.node.path}.`);
      grantUsageKeys(this.function, resources.evaluationPlanId);
    }
    if (access.readsNames) this.grantReadNames(resources);
    if (access.startsServingVersions) this.grantStartServingVersions(resources);
    if (access.webhookSecretKey) resources.webhookSecretKey.grantRead(this.function);
    if (access.putsEvents) resources.eventBus.grantPutEventsTo(this.function);
    if (access.callsModel && resources.model.provider === 'anthropic')
      resources.model.apiKey.grantRead(this.function);
    if (access.callsModel && resources.model.provider === 'bedrock')
      this.function.addToRolePolicy(bedrockInvokeStatement(this, resources.model.settings));
    const environment = accessEnvironment(
      access,
      environmentSources(resources, tableNames, queueUrls),
      trigger,
    );
    for (const [name, value] of Object.entries(environment)) this.function.addEnvironment(name, value);
  }

  private queueOf(resources: GrantableResources, name: QueueName): IQueue {
    const deployed = resources.queues.get(name);
    if (!deployed) throw new Error(`No queue '${name}' to grant to ${this.node.path}.`);
    return deployed.queue;
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
    this.grantAuthAttributeUpdate(resources, API_TOKEN_PARTITION_PREFIX, ['lastUsedAt']);
  }

  /**
   * Keeping a team's usage key on its item (lambdas/store/auth/usage-keys.ts keepTeamUsageKey: `SET`
   * the three usageKey attributes on `TEAM#<id>` / `TEAM`, no return values). Hand-written for the
   * same reason as the token-use write: the conditions confine UpdateItem to team partitions and to
   * those attributes, so the function cannot change a team's name, members, tokens or sessions.
   */
  private grantKeepUsageKeys(resources: GrantableResources): void {
    this.grantAuthAttributeUpdate(resources, teamKey('').pk, USAGE_KEY_ATTRIBUTES);
  }

  /**
   * UpdateItem on the auth table's items whose partition starts with `partitionPrefix`, writing
   * only `attributes` (and the keys), with no return values: the one write both grants above allow.
   */
  private grantAuthAttributeUpdate(
    resources: GrantableResources,
    partitionPrefix: string,
    attributes: readonly string[],
  ): void {
    const table = resources.tables.get(AUTH_TABLE.id);
    if (!table) throw new Error(`No table '${AUTH_TABLE.id}' to grant to ${this.node.path}.`);
    const keyAttributes = [AUTH_TABLE.partitionKey, ...(AUTH_TABLE.sortKey ? [AUTH_TABLE.sortKey] : [])];
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${partitionPrefix}*`] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...keyAttributes, ...attributes] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
    );
  }

  /** Creating a team's serving version item, and nothing else of the data table (lambdas/store/team-serving.ts). */
  private grantStartServingVersions(resources: GrantableResources): void {
    const table = resources.tables.get(DATA_TABLE.id);
    if (!table) throw new Error(`No table '${DATA_TABLE.id}' to grant to ${this.node.path}.`);
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [teamServingVersionKey('*').pk] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...SERVING_VERSION_ATTRIBUTES] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
    );
  }

  /**
   * A function that names people (lambdas/store/auth/people.ts) reads users' emails and API tokens'
   * names. Hand-written because no grant method limits a read to some items and attributes: the
   * conditions confine GetItem and BatchGetItem to user and API token items and to the attributes
   * the directory projects, so the function reads no password, session or membership.
   */
  private grantReadNames(resources: GrantableResources): void {
    const table = resources.tables.get(AUTH_TABLE.id);
    if (!table) throw new Error(`No table '${AUTH_TABLE.id}' to grant to ${this.node.path}.`);
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: {
          'ForAllValues:StringLike': {
            'dynamodb:LeadingKeys': [
              `${userPartition('')}*`,
              `${apiTokenIdKey('').pk}*`,
              `${API_TOKEN_PARTITION_PREFIX}*`,
            ],
          },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...PEOPLE_ATTRIBUTES] },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      }),
    );
  }

  /**
   * Table grants cover `<table ARN>/index/*` so Query can use the table's own GSIs: each such
   * wildcard of this role is acknowledged as the template states it, which is known only once CDK
   * has resolved the cross-stack references (an import of the stateful stack's table ARN), that is
   * when the construct tree is validated.
   */
  private acknowledgeIndexWildcards(): void {
    this.node.addValidation({
      validate: () => {
        const policy = this.role.node.tryFindChild('DefaultPolicy')?.node.defaultChild;
        if (!(policy instanceof CfnPolicy)) return [];
        const document = Stack.of(policy).resolve(policy.policyDocument) as {
          Statement?: Array<{ Resource?: unknown }>;
        };
        for (const statement of document.Statement ?? []) {
          const resources = [statement.Resource].flat();
          for (const resource of resources.map(flattenReference)) {
            if (!resource.endsWith('/index/*')) continue;
            acknowledgeNag(
              this.role,
              `AwsSolutions-IAM5[Resource::${resource}]`,
              `The grant on the table ${resource.slice(0, -'/index/*'.length)} includes its global secondary indexes (<table ARN>/index/*) so the function can Query them; the wildcard matches indexes of this one table only.`,
            );
          }
        }
        return [];
      },
    });
  }
}

/**
 * A CloudFormation value as one string, the way cdk-nag names a resource in a finding: Fn::Join
 * joined, `<Id.Attribute>` for Fn::GetAtt, `<Id>` for Ref, an import's export name.
 */
function flattenReference(value: unknown): string {
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/}/g, '>');
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const node = value as Record<string, unknown>;
  const join = node['Fn::Join'];
  if (Array.isArray(join)) return (join[1] as unknown[]).map(flattenReference).join(String(join[0]));
  const getAtt = node['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return `<${flattenReference(getAtt[0])}.${flattenReference(getAtt[1])}>`;
  if ('Fn::ImportValue' in node) return flattenReference(node['Fn::ImportValue']);
  if ('Ref' in node) return `<${flattenReference(node.Ref)}>`;
  return JSON.stringify(value);
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

/** What the stack gives `accessEnvironment`: its resources' names, URLs and ARNs (CDK tokens). */
function environmentSources(
  resources: GrantableResources,
  tableNames: Record<TableDefinition['id'], string>,
  queueUrls: Record<WorkQueueName, string>,
): EnvironmentSources {
  return {
    tableNames,
    queueUrls,
    sessionSecret: { SESSION_SECRET_ARN: resources.sessionSigningKey.secretArn },
    ...(resources.email
      ? { email: { EMAIL_FROM: resources.email.from, APP_URL: resources.email.appUrl } }
      : {}),
    ...(resources.appUrl !== undefined ? { appUrl: resources.appUrl } : {}),
    model: {
      ...modelEnvironment(resources.model),
      ...(resources.modelPrices !== undefined ? { MODEL_PRICES: resources.modelPrices } : {}),
    },
    modelChoice: {
      ...(resources.model.provider === 'bedrock' ? modelEnvironment(resources.model) : {}),
      ...(resources.modelPrices !== undefined ? { MODEL_PRICES: resources.modelPrices } : {}),
    },
    ...(resources.defaultSynthesisHandler
      ? { defaultSynthesisHandler: resources.defaultSynthesisHandler }
      : {}),
    ...(resources.synthesisRunsPerTeamPerHour
      ? { synthesisRunsPerTeamPerHour: resources.synthesisRunsPerTeamPerHour }
      : {}),
    webhookSecretKey: { WEBHOOK_SECRET_KEY_ARN: resources.webhookSecretKey.secretArn },
    eventBusName: resources.eventBus.eventBusName,
    ...(resources.recordShards !== undefined ? { recordShards: resources.recordShards } : {}),
    ...(resources.evaluationRoutes !== undefined ? { evaluationRoutes: resources.evaluationRoutes } : {}),
    ...(resources.evaluationFallbackKey !== undefined
      ? { evaluationFallbackKey: resources.evaluationFallbackKey }
      : {}),
    ...(resources.evaluationPlanId !== undefined ? { usagePlanId: resources.evaluationPlanId } : {}),
  };
}

function grantTable(table: ITable, fn: NodejsFunction, level: TableAccess): void {
  if (level === 'readWrite') table.grantReadWriteData(fn);
  else if (level === 'write') table.grantWriteData(fn);
  else table.grantReadData(fn);
}
