import { existsSync } from 'node:fs';
import { type Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_REFUSAL_CONTEXT_KEY } from '../../lambdas/auth/csrf.ts';
import { PASSWORD_HASHING_MEMORY_MB } from '../../lambdas/auth/password.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  EVENT_DELIVERER,
  EVENT_RELAY,
  type FunctionAccess,
  GUARDRAIL_JUDGE,
  HANDLERS,
  type HandlerTrigger,
  MAX_RECEIVE_COUNT,
  MONITOR_JUDGE,
  RUN_SWEEPER,
  runsOnDeploy,
  SYNTHESIS_WORKER,
  scheduleOf,
  USAGE_KEY_BACKFILL,
  WEBHOOK_DELIVERER,
  WEBHOOK_SLOW_DELIVERER,
  WORKER_TIMEOUT_SECONDS,
} from '../../lambdas/functions.ts';
import { DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { METRIC, METRICS_NAMESPACE } from '../../lambdas/observability/metrics.ts';
import { defineOperation, evaluationPaths, moduleOf } from '../../lambdas/operations/declaration.ts';
import { operationFunctions } from '../../lambdas/operations/functions.ts';
import { getSynthesisRun } from '../../lambdas/operations/get-synthesis-run.ts';
import { OPERATIONS } from '../../lambdas/operations/index.ts';
import { QUEUES as DECLARED_QUEUES, type QueueDefinition, type QueueName } from '../../lambdas/queues.ts';
import { TABLE_DEFINITIONS, type TableDefinition } from '../../lambdas/store/table-definitions.ts';
import { buildScriptCommand, handlerEntryPath, operationEntryPath, REPO_ROOT } from '../../lib/bundling.ts';
import { emailSettings, PLACEHOLDER_EMAIL_FROM } from '../../lib/email.ts';
import { ALARM_THRESHOLDS } from '../../lib/operations.ts';
import { SERVICE_NAME, type ServiceFunction } from '../../lib/service-function.ts';
import type { PipelineSynthesisStacks } from '../../lib/stacks.ts';
import { localFunctions, localRoutes } from '../../local/functions.ts';
import type { LocalQueue } from '../../local/queue/queue.ts';
import { type LocalQueues, startLocalQueues } from '../../local/queue/queues.ts';
import { localTriggers } from '../../local/triggers.ts';
import {
  actionsOf,
  type BuildOptions,
  buildStacks,
  type CfnResource,
  logicalIdOf,
  methodKey,
  methodPath,
  type PolicyStatement,
  policyStatements,
  type ReferenceIndex,
  referenceIndex,
  referencedLogicalIds as referencesIn,
  resourcePaths,
  resourcesOf,
  statementsOfRole,
  templatesOf,
  testApp,
} from './helpers.ts';

interface Synthesized {
  stacks: PipelineSynthesisStacks;
  /** Every resource of the app's templates (stateful, service, nested), by logical id: unique across them. */
  resources: Record<string, CfnResource>;
  /** Every output of the app's top-level stacks, by name. */
  outputs: Record<string, { Value: unknown }>;
  index: ReferenceIndex;
}

interface FunctionUnderTest {
  name: string;
  fn: ServiceFunction;
  access: FunctionAccess;
  trigger?: HandlerTrigger;
  /** Environment variables beyond the shared ones and those its access implies. */
  extraEnv: string[];
  /** Memory in MB the function should get. */
  memorySize: number;
}

// The test's own map from table to access key, independent of the one the code uses.
const ACCESS_KEY = {
  Runs: 'runs',
  Data: 'data',
  Auth: 'auth',
  Events: 'events',
  Settings: 'settings',
} as const;
const DEFAULT_MEMORY_MB = 256;
const WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

function synthesize(options: BuildOptions): Synthesized {
  const stacks = buildStacks(testApp(), `Test-${options.stage}`, options);
  const templates = templatesOf(stacks).map(
    ({ template }) =>
      template.toJSON() as {
        Resources: Record<string, CfnResource>;
        Outputs?: Record<string, { Value: unknown }>;
      },
  );
  const resources = Object.assign({}, ...templates.map((template) => template.Resources)) as Record<
    string,
    CfnResource
  >;
  const outputs = Object.assign({}, ...templates.map((template) => template.Outputs ?? {}));
  return { stacks, resources, outputs, index: referenceIndex(templates) };
}

let dev: Synthesized;
let prod: Synthesized;

/** The Anthropic key secret of an app on the default provider (there is none on Bedrock). */
function anthropicKeyOf(synthesized: Synthesized) {
  const key = synthesized.stacks.stateful.stateful.anthropicApiKey;
  if (key === undefined) throw new Error('the stack has no Anthropic API key secret');
  return key;
}

/** The logical ids a value of `synthesized` refers to, across its templates. */
function referencedLogicalIds(value: unknown, synthesized: Synthesized = dev): Set<string> {
  return referencesIn(value, synthesized.index);
}

function resourcesOfType(synthesized: Synthesized, type: string): [string, CfnResource][] {
  return Object.entries(synthesized.resources).filter(([, resource]) => resource.Type === type);
}

function propertiesOf(synthesized: Synthesized, logicalId: string): Record<string, unknown> {
  const properties = synthesized.resources[logicalId]?.Properties;
  if (!properties) throw new Error(`No resource ${logicalId}`);
  return properties;
}

/** The queue table, each row of the general shape. */
const QUEUES: readonly QueueDefinition[] = DECLARED_QUEUES;

/** The operations' functions, one per module: operations that share a module share one function. */
const OPERATION_FUNCTIONS = operationFunctions(OPERATIONS);

/** The event source mappings that invoke `fn`. */
function mappingsOf(fn: IFunction): Record<string, unknown>[] {
  return resourcesOfType(dev, 'AWS::Lambda::EventSourceMapping')
    .map(([, resource]) => resource.Properties ?? {})
    .filter((properties) => (properties.FunctionName as { Ref: string }).Ref === logicalIdOf(fn));
}

/** The function of a handler entry (the authorizer's is the API's). */
function handlerFunction(stacks: PipelineSynthesisStacks, entry: string): ServiceFunction {
  const fn =
    entry === AUTHORIZER.entry
      ? stacks.service.api.authorizerFunction
      : stacks.service.jobs.functions.get(entry);
  if (!fn) throw new Error(`No function for ${entry}`);
  return fn;
}

function functionsOf(stacks: PipelineSynthesisStacks): FunctionUnderTest[] {
  const apiFunctions = OPERATION_FUNCTIONS.map((definition) => {
    const fn = stacks.service.routeFunctions.get(definition.module);
    if (!fn) throw new Error(`No function for ${definition.module}`);
    return {
      name: definition.module,
      fn,
      access: definition.access,
      extraEnv: definition.access.startsRuns
        ? ['DEFAULT_SYNTHESIS_HANDLER', 'SYNTHESIS_RUNS_PER_TEAM_PER_HOUR']
        : [],
      memorySize: definition.memoryMb,
    };
  });
  const handlers = HANDLERS.map((handler) => ({
    name: handler.entry,
    fn: handlerFunction(stacks, handler.entry),
    access: handler.access,
    trigger: handler.trigger,
    extraEnv: [],
    memorySize: handler.memoryMb ?? DEFAULT_MEMORY_MB,
  }));
  return [...apiFunctions, ...handlers];
}

/** The deployed queue of a declared queue name. */
function queueOf(synthesized: Synthesized, name: string) {
  return synthesized.stacks.stateful.queue(name as QueueName);
}

/** The queue holding a declared queue's dead letters. */
function deadLettersOf(synthesized: Synthesized, name: string) {
  const deployed = queueOf(synthesized, name);
  if (!deployed.deadLetterQueue) throw new Error(`Queue ${name} has no dead-letter queue.`);
  return deployed.deadLetterQueue;
}

/** Whether `value` refers to `construct`, in its template or across templates. */
function refersTo(value: unknown, construct: IConstruct, synthesized: Synthesized = dev): boolean {
  return referencedLogicalIds(value, synthesized).has(logicalIdOf(construct));
}

function tableLogicalId(synthesized: Synthesized, id: TableDefinition['id']): string {
  return logicalIdOf(synthesized.stacks.stateful.stateful.table(id));
}

function environmentOf(synthesized: Synthesized, fn: ServiceFunction): Record<string, unknown> {
  const environment = propertiesOf(synthesized, logicalIdOf(fn.function)).Environment as {
    Variables: Record<string, unknown>;
  };
  return environment.Variables;
}

function statementsOf(synthesized: Synthesized, fn: ServiceFunction): PolicyStatement[] {
  return statementsOfRole(synthesized.resources, logicalIdOf(fn.role));
}

/** The tables (logical ids) the statements let write; conditioned ones are the token-use write, checked on its own. */
function tablesWrittenBy(statements: PolicyStatement[]): Set<string> {
  return new Set(
    statements
      .filter((statement) => statement.Condition === undefined)
      .filter((statement) => actionsOf(statement).some((action) => WRITE_ACTIONS.includes(action)))
      .flatMap((statement) => [...referencedLogicalIds(statement.Resource)]),
  );
}

function dynamoStatements(statements: PolicyStatement[]): PolicyStatement[] {
  return statements.filter((statement) =>
    actionsOf(statement).some((action) => action.startsWith('dynamodb:')),
  );
}

function allStatements(synthesized: Synthesized): PolicyStatement[] {
  return resourcesOfType(synthesized, 'AWS::IAM::Policy').flatMap(([, policy]) => policyStatements(policy));
}

/** The roles (logical ids) of the IAM policies with a statement that matches. */
function rolesWithStatement(
  synthesized: Synthesized,
  matches: (statement: PolicyStatement) => boolean,
): string[] {
  return resourcesOfType(synthesized, 'AWS::IAM::Policy')
    .filter(([, policy]) => policyStatements(policy).some(matches))
    .flatMap(([, policy]) => [...referencedLogicalIds(policy.Properties?.Roles, synthesized)])
    .sort();
}

/** The logical ids a value refers to, without pseudo parameters such as AWS::Region. */
function referencedResources(value: unknown): string[] {
  return [...referencedLogicalIds(value)].filter((id) => !id.startsWith('AWS::')).sort();
}

const ACME_EMAIL = emailSettings({
  from: 'signin@mail.acme.example',
  identity: 'acme.example',
  appUrl: 'https://app.acme.example',
});

beforeAll(() => {
  dev = synthesize({ stage: 'dev' });
  prod = synthesize({
    stage: 'prod',
    defaultSynthesisHandler: 'claude-v1',
    email: ACME_EMAIL,
    alarmEmail: 'ops@acme.example',
  });
});

describe('tables', () => {
  it('creates exactly one table per definition', () => {
    expect(resourcesOfType(dev, 'AWS::DynamoDB::Table')).toHaveLength(TABLE_DEFINITIONS.length);
    expect(TABLE_DEFINITIONS.map((definition) => definition.id)).toEqual([
      'Runs',
      'Data',
      'Auth',
      'Events',
      'Settings',
    ]);
  });

  it.each(TABLE_DEFINITIONS)(
    'gives the $id table its keys, on-demand billing, PITR and AWS-managed encryption',
    (definition) => {
      const table = propertiesOf(dev, tableLogicalId(dev, definition.id));

      expect(table.KeySchema).toEqual([
        { AttributeName: definition.partitionKey, KeyType: 'HASH' },
        ...(definition.sortKey ? [{ AttributeName: definition.sortKey, KeyType: 'RANGE' }] : []),
      ]);
      expect(table.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.SSESpecification).toEqual({ SSEEnabled: true });
      expect(table.ProvisionedThroughput).toBeUndefined();
    },
  );

  it.each(TABLE_DEFINITIONS)(
    'gives the $id table its GSIs with ALL projection and its TTL attribute',
    (definition) => {
      const table = propertiesOf(dev, tableLogicalId(dev, definition.id));

      // A table without indexes (Settings) has no GlobalSecondaryIndexes property at all.
      expect(table.GlobalSecondaryIndexes ?? []).toEqual(
        definition.indexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            ...(index.sortKey ? [{ AttributeName: index.sortKey, KeyType: 'RANGE' }] : []),
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      );
      expect(table.TimeToLiveSpecification).toEqual(
        definition.timeToLiveAttribute
          ? { AttributeName: definition.timeToLiveAttribute, Enabled: true }
          : undefined,
      );
    },
  );

  it('protects and retains every table in prod, and destroys them in dev', () => {
    for (const definition of TABLE_DEFINITIONS) {
      const prodTable = prod.resources[tableLogicalId(prod, definition.id)];
      const devTable = dev.resources[tableLogicalId(dev, definition.id)];

      expect(prodTable?.Properties?.DeletionProtectionEnabled).toBe(true);
      expect(prodTable?.DeletionPolicy).toBe('Retain');
      expect(prodTable?.UpdateReplacePolicy).toBe('Retain');
      expect(devTable?.Properties?.DeletionProtectionEnabled).toBe(false);
      expect(devTable?.DeletionPolicy).toBe('Delete');
    }
  });

  it('turns on termination protection for the prod stacks only', () => {
    for (const stack of [prod.stacks.stateful, prod.stacks.service])
      expect(stack.terminationProtection).toBe(true);
    for (const stack of [dev.stacks.stateful, dev.stacks.service])
      expect(stack.terminationProtection).toBe(false);
  });
});

describe('queues and secrets', () => {
  it('creates every declared queue and a dead-letter queue for each work queue, nothing else', () => {
    const workQueues = QUEUES.filter((queue) => queue.kind === 'work');

    expect(resourcesOfType(dev, 'AWS::SQS::Queue')).toHaveLength(QUEUES.length + workQueues.length);
    expect(
      resourcesOfType(dev, 'AWS::SQS::Queue')
        .map(([id]) => id)
        .sort(),
    ).toEqual(
      [...dev.stacks.stateful.queues.values()]
        .flatMap((deployed) => [
          deployed.queue,
          ...(deployed.deadLetterQueue ? [deployed.deadLetterQueue] : []),
        ])
        .map(logicalIdOf)
        .sort(),
    );
  });

  it.each(QUEUES.filter((queue) => queue.kind === 'work'))(
    'gives $name its visibility timeout, retention and a redrive to its DLQ after its receive count',
    (definition) => {
      const deployed = queueOf(dev, definition.name);
      const queue = propertiesOf(dev, logicalIdOf(deployed.queue));
      const redrive = queue.RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown };

      expect(queue.VisibilityTimeout).toBe(definition.visibilityTimeoutSeconds);
      expect(queue.MessageRetentionPeriod).toBe(
        'retentionSeconds' in definition ? definition.retentionSeconds : undefined,
      );
      expect(redrive.maxReceiveCount).toBe(definition.maxReceiveCount);
      expect(redrive.deadLetterTargetArn).toEqual({
        'Fn::GetAtt': [logicalIdOf(deadLettersOf(dev, definition.name)), 'Arn'],
      });
      expect(queue.SqsManagedSseEnabled).toBe(true);
    },
  );

  it('gives the synthesis queue six worker timeouts of visibility, and its consumers a visibility within it', () => {
    const queue = propertiesOf(dev, logicalIdOf(queueOf(dev, SYNTHESIS_WORKER.trigger.queue).queue));

    expect(queue.VisibilityTimeout).toBe(6 * WORKER_TIMEOUT_SECONDS);
    expect(queue.VisibilityTimeout).toBe(720);
    expect((queue.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount).toBe(MAX_RECEIVE_COUNT);
    // Lambda refuses an SQS event source whose queue hides a message for less than the function may run.
    for (const handler of HANDLERS) {
      if (!('queue' in handler.trigger)) continue;
      const deployed = queueOf(dev, handler.trigger.queue);
      const consumed = handler.trigger.deadLetters ? deployed.deadLetterQueue : deployed.queue;
      const visibility = Number(
        propertiesOf(dev, logicalIdOf(consumed as IConstruct)).VisibilityTimeout ?? 30,
      );
      expect(visibility, handler.entry).toBeGreaterThanOrEqual(6 * handler.timeoutSeconds);
    }
  });

  it('keeps dead letters for 14 days, encrypted', () => {
    for (const deployed of dev.stacks.stateful.queues.values()) {
      const dlq = propertiesOf(dev, logicalIdOf(deployed.deadLetterQueue ?? deployed.queue));

      expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      expect(dlq.SqsManagedSseEnabled).toBe(true);
    }
  });

  it('denies every request to any queue that does not use TLS', () => {
    for (const [queueId] of resourcesOfType(dev, 'AWS::SQS::Queue')) {
      const policy = resourcesOfType(dev, 'AWS::SQS::QueuePolicy').find(([, resource]) =>
        referencedLogicalIds(resource.Properties?.Queues).has(queueId),
      );
      const statements = policyStatements(policy?.[1]);

      expect(statements, queueId).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('retains the queues and secrets in prod', () => {
    const { stateful } = prod.stacks.stateful;
    const queues = resourcesOfType(prod, 'AWS::SQS::Queue');
    expect(queues.length).toBeGreaterThan(0);
    for (const [id, queue] of queues) expect(queue.DeletionPolicy, id).toBe('Retain');
    for (const construct of [anthropicKeyOf(prod), stateful.sessionSigningKey, stateful.webhookSecretKey]) {
      expect(prod.resources[logicalIdOf(construct)]?.DeletionPolicy).toBe('Retain');
    }
  });

  it('generates the session signing key and stores only a placeholder for the Anthropic key', () => {
    const signingKey = propertiesOf(dev, logicalIdOf(dev.stacks.stateful.stateful.sessionSigningKey));
    const anthropicKey = propertiesOf(dev, logicalIdOf(anthropicKeyOf(dev)));

    expect(signingKey.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true });
    expect(String(anthropicKey.SecretString)).toMatch(/^REPLACE_ME/);
  });
});

describe('functions', () => {
  it('creates one function per operation module and one per handler of HANDLERS', () => {
    const modules = new Set(OPERATIONS.map(moduleOf));

    expect(OPERATION_FUNCTIONS.map(({ module }) => module).sort()).toEqual([...modules].sort());
    expect([...dev.stacks.service.routeFunctions.keys()].sort()).toEqual([...modules].sort());
    // …and the Provider framework's onEvent, isComplete and onTimeout of each handler run on deploy.
    expect(resourcesOfType(dev, 'AWS::Lambda::Function')).toHaveLength(
      modules.size + HANDLERS.length + 3 * HANDLERS.filter(runsOnDeploy).length,
    );
  });

  it('runs every function on nodejs24.x, arm64, traced, logging to its own one-month log group', () => {
    for (const { fn } of functionsOf(dev.stacks)) {
      const properties = propertiesOf(dev, logicalIdOf(fn.function));
      const logGroupId = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      expect(properties.Runtime).toBe('nodejs24.x');
      expect(properties.Architectures).toEqual(['arm64']);
      expect(properties.Handler).toBe('index.handler');
      expect(properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(propertiesOf(dev, logGroupId).RetentionInDays).toBe(30);
    }
  });

  it('gives each function exactly the environment its access (and a consumer its trigger) implies', () => {
    const urlVariable = new Map(
      QUEUES.flatMap((queue) => (queue.kind === 'work' ? [[queue.name, queue.urlVariable]] : [])),
    );
    for (const { name, fn, access, trigger, extraEnv } of functionsOf(dev.stacks)) {
      const hides = trigger && 'queue' in trigger && trigger.changesVisibility ? [trigger.queue] : [];
      const expected = [
        'POWERTOOLS_SERVICE_NAME',
        'LOG_LEVEL',
        ...TABLE_DEFINITIONS.filter((definition) => access[ACCESS_KEY[definition.id]]).map((d) => d.envVar),
        ...[...new Set([...(access.send ?? []), ...hides])].map((queue) => urlVariable.get(queue)),
        ...(access.sessionSecret ? ['SESSION_SECRET_ARN'] : []),
        ...(access.sendsEmail ? ['EMAIL_FROM', 'APP_URL'] : []),
        ...(access.linksToApp && !access.sendsEmail ? ['APP_URL'] : []),
        ...(access.callsModel ? ['ANTHROPIC_SECRET_ARN'] : []),
        ...(access.webhookSecretKey ? ['WEBHOOK_SECRET_KEY_ARN'] : []),
        ...(access.putsEvents ? ['EVENT_BUS_NAME'] : []),
        ...((access.readsNames || access.keepsUsageKeys) && !access.auth ? ['AUTH_TABLE'] : []),
        ...(access.namesUsageKeys ? ['EVALUATION_ROUTES', 'EVALUATION_FALLBACK_KEY'] : []),
        ...(access.managesUsageKeys ? ['USAGE_PLAN_ID'] : []),
        ...extraEnv,
      ];

      expect(Object.keys(environmentOf(dev, fn)).sort(), name).toEqual(expected.sort());
    }
  });

  it('matches the local stack: every function gets the same variables there, with local stand-ins', () => {
    const local = localFunctions(
      {
        tableNames: { Runs: 'r', Data: 'd', Auth: 'a', Events: 'e', Settings: 's' },
        queueUrls: {
          'synthesis-jobs': 'http://127.0.0.1:1/000000000000/q',
          'lifecycle-jobs': 'http://127.0.0.1:1/000000000000/lifecycle',
          'guardrail-checks': 'http://127.0.0.1:1/000000000000/guardrail-checks',
          'webhook-deliveries': 'http://127.0.0.1:3/000000000000/w',
          'webhook-slow-deliveries': 'http://127.0.0.1:3/000000000000/ws',
        },
        sessionSecret: { SESSION_SECRET: 'k' },
        email: { EMAIL_FROM: 'f', APP_URL: 'http://127.0.0.1:1', EMAIL_OUTBOX_DIR: '/tmp/outbox' },
        appUrl: 'http://127.0.0.1:1/app',
        model: { ANTHROPIC_API_KEY: 'k' },
        defaultSynthesisHandler: 'heuristic-v1',
        synthesisRunsPerTeamPerHour: 500,
        webhookSecretKey: { WEBHOOK_SECRET_KEY: 'k' },
        allowLocalWebhookUrls: true,
        evaluationRoutes: evaluationPaths(OPERATIONS),
        evaluationFallbackKey: 'local-shared-evaluations-key',
      },
      {
        region: 'us-east-1',
        credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
        dynamodbEndpoint: 'http://127.0.0.1:2',
        sqsEndpoint: 'http://127.0.0.1:3',
        logLevel: 'WARN',
      },
    );
    // What Lambda's role, Secrets Manager and the region's endpoints give on AWS.
    const standIns: Record<string, string | null> = {
      SESSION_SECRET: 'SESSION_SECRET_ARN',
      ANTHROPIC_API_KEY: 'ANTHROPIC_SECRET_ARN',
      WEBHOOK_SECRET_KEY: 'WEBHOOK_SECRET_KEY_ARN',
      ALLOW_LOCAL_WEBHOOK_URLS: null,
      EMAIL_OUTBOX_DIR: null,
      AWS_ACCESS_KEY_ID: null,
      AWS_SECRET_ACCESS_KEY: null,
      AWS_ENDPOINT_URL_DYNAMODB: null,
      AWS_ENDPOINT_URL_SQS: null,
      POWERTOOLS_METRICS_DISABLED: null,
    };
    // A handler run on deploy has no local function: the local stack has no deploy.
    const functions = functionsOf(dev.stacks).filter(({ trigger }) => !(trigger && 'deploy' in trigger));
    expect([...local.keys()].sort()).toEqual([...new Set(functions.map(({ name }) => name))].sort());
    for (const { name, fn } of functions) {
      const localNames = Object.keys(local.get(name)?.environment ?? {}).flatMap((variable) => {
        const onAws = variable in standIns ? standIns[variable] : variable;
        return onAws ? [onAws] : [];
      });
      // The local stack has no EventBridge: no bus name there (docs/events.md).
      const onAws = Object.keys(environmentOf(dev, fn)).filter((variable) => variable !== 'EVENT_BUS_NAME');
      expect(localNames.sort(), name).toEqual(onAws.sort());
      expect(local.get(name)?.timeoutMs, name).toBe(
        Number(propertiesOf(dev, logicalIdOf(fn.function)).Timeout) * 1000,
      );
      // Its invocations wake the stream readers of exactly the tables its role may write.
      expect((local.get(name)?.writes ?? []).map((table) => tableLogicalId(dev, table)).sort(), name).toEqual(
        [...tablesWrittenBy(statementsOf(dev, fn))].sort(),
      );
    }
  });

  it('points the table and queue variables at the right resources', () => {
    for (const { name, fn, access } of functionsOf(dev.stacks)) {
      const environment = environmentOf(dev, fn);
      for (const definition of TABLE_DEFINITIONS) {
        if (!access[ACCESS_KEY[definition.id]]) continue;
        expect(referencedResources(environment[definition.envVar]), name).toEqual([
          tableLogicalId(dev, definition.id),
        ]);
      }
      for (const queue of QUEUES) {
        if (queue.kind !== 'work' || environment[queue.urlVariable] === undefined) continue;
        expect(referencedResources(environment[queue.urlVariable]), name).toEqual([
          logicalIdOf(queueOf(dev, queue.name).queue),
        ]);
      }
    }
  });

  it('passes the default synthesis handler to the synthesize function', () => {
    const synthesize = OPERATIONS.find(
      (operation) => operation.path === '/pipelines/{pipelineId}/synthesize',
    );
    if (!synthesize) throw new Error('no synthesize operation');
    const devFunction = dev.stacks.service.routeFunctions.get(moduleOf(synthesize));
    const prodFunction = prod.stacks.service.routeFunctions.get(moduleOf(synthesize));
    if (!devFunction || !prodFunction) throw new Error('no synthesize function');

    expect(environmentOf(dev, devFunction).DEFAULT_SYNTHESIS_HANDLER).toBe('heuristic-v1');
    expect(environmentOf(prod, prodFunction).DEFAULT_SYNTHESIS_HANDLER).toBe('claude-v1');
  });

  it('gives the authorizer the session signing key ARN and the worker the Anthropic key ARN', () => {
    const { stateful } = dev.stacks.stateful;
    expect(
      refersTo(
        environmentOf(dev, dev.stacks.service.api.authorizerFunction).SESSION_SECRET_ARN,
        stateful.sessionSigningKey,
      ),
    ).toBe(true);
    expect(
      refersTo(
        environmentOf(dev, handlerFunction(dev.stacks, SYNTHESIS_WORKER.entry)).ANTHROPIC_SECRET_ARN,
        anthropicKeyOf(dev),
      ),
    ).toBe(true);
  });

  it('runs the worker for the worker timeout with 512 MB', () => {
    const worker = propertiesOf(
      dev,
      logicalIdOf(handlerFunction(dev.stacks, SYNTHESIS_WORKER.entry).function),
    );

    expect(worker.Timeout).toBe(WORKER_TIMEOUT_SECONDS);
    expect(worker.MemorySize).toBe(512);
  });

  it.each(HANDLERS.filter((handler) => 'queue' in handler.trigger))(
    'feeds $entry from its declared queue with its batch, concurrency and partial batch failures',
    (handler) => {
      if (!('queue' in handler.trigger)) throw new Error('a queue trigger');
      const trigger = handler.trigger;
      const mappings = mappingsOf(handlerFunction(dev.stacks, handler.entry).function);
      const deployed = queueOf(dev, trigger.queue);
      const source = trigger.deadLetters ? deployed.deadLetterQueue : deployed.queue;

      expect(mappings).toHaveLength(1);
      expect(referencedResources(mappings[0]?.EventSourceArn)).toEqual([logicalIdOf(source as IConstruct)]);
      expect(mappings[0]).toMatchObject({
        BatchSize: trigger.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ...(trigger.maxConcurrency ? { ScalingConfig: { MaximumConcurrency: trigger.maxConcurrency } } : {}),
        ...(trigger.maxBatchingWindowSeconds
          ? { MaximumBatchingWindowInSeconds: trigger.maxBatchingWindowSeconds }
          : {}),
      });
    },
  );

  it('has one event source mapping per queue trigger and per stream source, and no other', () => {
    const declared = HANDLERS.reduce(
      (count, handler) =>
        count +
        ('queue' in handler.trigger ? 1 : 'streams' in handler.trigger ? handler.trigger.streams.length : 0),
      0,
    );

    expect(resourcesOfType(dev, 'AWS::Lambda::EventSourceMapping')).toHaveLength(declared);
    // The worker, the dead-letter handler, the deleter, the webhook deliverers of both lanes, the
    // guardrail judge, and the events, runs and settings streams.
    expect(declared).toBe(9);
  });

  it('resolves handler entries to lambdas/handlers/<entry>.ts and operation modules to lambdas/operations/<module>.ts under the repository root', () => {
    expect(handlerEntryPath('authorize')).toBe(`${REPO_ROOT}/lambdas/handlers/authorize.ts`);
    expect(operationEntryPath('get-synthesis-run')).toBe(
      `${REPO_ROOT}/lambdas/operations/get-synthesis-run.ts`,
    );
    expect(REPO_ROOT.endsWith('/lib')).toBe(false);
    // Every function's entry is a file of the repository.
    for (const { entry } of HANDLERS) expect(existsSync(handlerEntryPath(entry)), entry).toBe(true);
    for (const { module } of OPERATION_FUNCTIONS) {
      expect(existsSync(operationEntryPath(module)), module).toBe(true);
    }
  });
});

describe('least privilege', () => {
  it('lets each function touch only the tables it names, writing only where it may', () => {
    for (const { name, fn, access } of functionsOf(dev.stacks)) {
      const statements = dynamoStatements(statementsOf(dev, fn));
      const referenced = new Set(
        statements.flatMap((statement) => [...referencedLogicalIds(statement.Resource)]),
      );
      const written = tablesWrittenBy(statements);
      // A stream event source reads its table's stream (a read grant on the stream, never a write).
      const streamed: string[] = HANDLERS.filter((handler) => handler.entry === name).flatMap((handler) =>
        'streams' in handler.trigger ? handler.trigger.streams.map((source) => source.table) : [],
      );
      // Naming people reads the auth table's users and tokens (its own narrow statement, below).
      const named: string[] = access.readsNames ? ['Auth'] : [];
      const expectedTables = TABLE_DEFINITIONS.filter(
        (d) => access[ACCESS_KEY[d.id]] || streamed.includes(d.id) || named.includes(d.id),
      );
      const expectedWrites = expectedTables.filter((d) => {
        const level = access[ACCESS_KEY[d.id]];
        return level === 'readWrite' || level === 'write';
      });

      expect([...referenced].sort(), name).toEqual(
        expectedTables.map((d) => tableLogicalId(dev, d.id)).sort(),
      );
      expect([...written].sort(), name).toEqual(expectedWrites.map((d) => tableLogicalId(dev, d.id)).sort());
    }
  });

  it('lets get-synthesis-run read runs but neither write nor queue', () => {
    const fn = dev.stacks.service.routeFunctions.get('get-synthesis-run');
    if (!fn) throw new Error('no get-synthesis-run function');
    const actions = statementsOf(dev, fn).flatMap(actionsOf);

    expect(actions).toContain('dynamodb:GetItem');
    expect(actions).toContain('dynamodb:Query');
    expect(actions).not.toContain('dynamodb:PutItem');
    expect(actions).not.toContain('dynamodb:UpdateItem');
    expect(actions).not.toContain('sqs:SendMessage');
  });

  it('lets the authorizer read the auth table and the session signing key, and write only token use', () => {
    const authorizer = dev.stacks.service.api.authorizerFunction;
    const statements = statementsOf(dev, authorizer);
    const referenced = new Set(
      statements.flatMap((statement) => [...referencedLogicalIds(statement.Resource)]),
    );
    const ownLogGroup = [
      ...referencedLogicalIds(propertiesOf(dev, logicalIdOf(authorizer.function)).LoggingConfig),
    ];
    const writes = statements.filter((statement) =>
      actionsOf(statement).some((action) => WRITE_ACTIONS.includes(action)),
    );

    expect(writes).toHaveLength(1);
    expect(actionsOf(writes[0] as PolicyStatement)).toEqual(['dynamodb:UpdateItem']);
    expect(writes[0]?.Condition).toBeDefined();
    expect([...referenced].sort()).toEqual(
      [
        ...ownLogGroup,
        tableLogicalId(dev, 'Auth'),
        logicalIdOf(dev.stacks.stateful.stateful.sessionSigningKey),
      ].sort(),
    );
  });

  it('lets only the functions whose access sends to a queue send to it, and only its consumers receive from it', () => {
    const rolesWith = (action: string, queue: IConstruct) =>
      rolesWithStatement(
        dev,
        (statement) =>
          actionsOf(statement).includes(action) &&
          referencedLogicalIds(statement.Resource).has(logicalIdOf(queue)),
      );
    const roleOf = (entry: string) => logicalIdOf(handlerFunction(dev.stacks, entry).role);
    for (const definition of QUEUES) {
      const deployed = queueOf(dev, definition.name);
      // A stream source's function records a batch it gives up on in its failure queue.
      const failing = HANDLERS.filter(
        (handler) =>
          'streams' in handler.trigger &&
          handler.trigger.streams.some((source) => source.onFailure === definition.name),
      ).map((handler) => roleOf(handler.entry));
      const senders = functionsOf(dev.stacks)
        .filter(({ access }) => access.send?.includes(definition.name as never))
        .map(({ fn }) => logicalIdOf(fn.role));
      const consumers = (deadLetters: boolean) =>
        HANDLERS.filter(
          (handler) =>
            'queue' in handler.trigger &&
            handler.trigger.queue === definition.name &&
            Boolean(handler.trigger.deadLetters) === deadLetters,
        ).map((handler) => roleOf(handler.entry));

      expect(senders.length + failing.length, definition.name).toBeGreaterThan(0);
      expect(rolesWith('sqs:SendMessage', deployed.queue), definition.name).toEqual(
        [...senders, ...failing].sort(),
      );
      expect(rolesWith('sqs:ReceiveMessage', deployed.queue), definition.name).toEqual(
        consumers(false).sort(),
      );
      if (deployed.deadLetterQueue) {
        // SQS moves a message to its dead-letter queue itself: no function sends there.
        expect(rolesWith('sqs:SendMessage', deployed.deadLetterQueue), definition.name).toEqual([]);
        expect(rolesWith('sqs:ReceiveMessage', deployed.deadLetterQueue), definition.name).toEqual(
          consumers(true).sort(),
        );
      }
    }
  });

  it("lets only the consumers that hide failed messages change a message's visibility, on their own queue", () => {
    for (const handler of HANDLERS) {
      const trigger = handler.trigger;
      if (!('queue' in trigger)) continue;
      const statements = statementsOf(dev, handlerFunction(dev.stacks, handler.entry)).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('sqs:')),
      );
      const deployed = queueOf(dev, trigger.queue);
      const consumed = trigger.deadLetters ? deployed.deadLetterQueue : deployed.queue;
      for (const statement of statements.filter((each) => actionsOf(each).includes('sqs:ReceiveMessage'))) {
        expect(referencedResources(statement.Resource), handler.entry).toEqual([
          logicalIdOf(consumed as IConstruct),
        ]);
      }
    }
  });

  it('lets only the functions that call the model (the worker) read the Anthropic key', () => {
    const secretId = logicalIdOf(anthropicKeyOf(dev));
    const readers = resourcesOfType(dev, 'AWS::IAM::Policy')
      .filter(([, policy]) => referencedLogicalIds(policy.Properties?.PolicyDocument).has(secretId))
      .flatMap(([, policy]) => [...referencedLogicalIds(policy.Properties?.Roles)]);
    const declaring = functionsOf(dev.stacks).filter(({ access }) => access.callsModel);

    expect(declaring.map(({ name }) => name)).toEqual([SYNTHESIS_WORKER.entry]);
    expect(readers).toEqual([logicalIdOf(handlerFunction(dev.stacks, SYNTHESIS_WORKER.entry).role)]);
  });

  it('never grants DynamoDB actions on Resource "*"', () => {
    const statements = resourcesOfType(dev, 'AWS::IAM::Policy').flatMap(([, policy]) =>
      policyStatements(policy),
    );
    const dynamo = dynamoStatements(statements);

    expect(dynamo.length).toBeGreaterThan(0);
    for (const statement of dynamo) {
      // dynamodb:ListStreams (the stream event source's) has no resource-level permissions.
      if (resourcesOf(statement).includes('*'))
        expect(actionsOf(statement)).toEqual(['dynamodb:ListStreams']);
    }
  });

  it('uses Resource "*" only for the X-Ray actions that have no resource-level permissions', () => {
    const statements = resourcesOfType(dev, 'AWS::IAM::Policy').flatMap(([, policy]) =>
      policyStatements(policy),
    );
    const wildcard = statements.filter((statement) => resourcesOf(statement).includes('*'));

    const xray = wildcard.filter((statement) => !actionsOf(statement).includes('dynamodb:ListStreams'));
    expect(xray.length).toBe(functionsOf(dev.stacks).length);
    for (const statement of xray) {
      expect(actionsOf(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
    // …and the two stream-fed functions' ListStreams, which has none either.
    expect(wildcard.length - xray.length).toBe(2);
  });

  it('uses no AWS-managed policy on any function role', () => {
    for (const { fn } of functionsOf(dev.stacks)) {
      expect(propertiesOf(dev, logicalIdOf(fn.role)).ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('authentication', () => {
  function byName(synthesized: Synthesized, name: string): FunctionUnderTest {
    const found = functionsOf(synthesized.stacks).find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no function ${name}`);
    return found;
  }

  it('lets exactly the functions that declare sessionSecret (the authorizer among them) read the signing key', () => {
    const secretId = logicalIdOf(dev.stacks.stateful.stateful.sessionSigningKey);
    const declaring = functionsOf(dev.stacks).filter(({ access }) => access.sessionSecret);
    const readers = rolesWithStatement(dev, (statement) =>
      referencedLogicalIds(statement.Resource).has(secretId),
    );
    const secretActions = allStatements(dev)
      .filter((statement) => referencedLogicalIds(statement.Resource).has(secretId))
      .flatMap(actionsOf);

    expect(declaring.map(({ name }) => name)).toEqual(
      expect.arrayContaining(['authorize', 'log-in', 'refresh-session', 'log-out', 'verify-magic-link']),
    );
    expect(readers).toEqual(declaring.map(({ fn }) => logicalIdOf(fn.role)).sort());
    expect([...new Set(secretActions)].sort()).toEqual([
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
    ]);
  });

  it('gives the signing key ARN, never a key, to the functions that sign or verify sessions', () => {
    for (const { name, fn, access } of functionsOf(dev.stacks)) {
      const environment = environmentOf(dev, fn);

      expect(referencedResources(environment.SESSION_SECRET_ARN), name).toEqual(
        access.sessionSecret ? [logicalIdOf(dev.stacks.stateful.stateful.sessionSigningKey)] : [],
      );
    }
  });

  it('puts no secret itself into any function environment', () => {
    for (const synthesized of [dev, prod]) {
      for (const [logicalId, fn] of resourcesOfType(synthesized, 'AWS::Lambda::Function')) {
        const environment = fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined;
        const names = Object.keys(environment?.Variables ?? {});

        expect(names, logicalId).not.toContain('SESSION_SECRET');
        expect(names, logicalId).not.toContain('ANTHROPIC_API_KEY');
      }
    }
  });

  it('lets only the sign-in link and the invitation send email, each only as the sender identity', () => {
    const sesStatements = allStatements(dev).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('ses:')),
    );
    const senders = rolesWithStatement(dev, (statement) =>
      actionsOf(statement).some((action) => action.startsWith('ses:')),
    );

    expect(
      functionsOf(dev.stacks)
        .filter(({ access }) => access.sendsEmail)
        .map(({ name }) => name),
    ).toEqual(['request-magic-link', 'invite-team-member']);
    expect(senders.sort()).toEqual(
      ['request-magic-link', 'invite-team-member']
        .map((name) => logicalIdOf(byName(dev, name).fn.role))
        .sort(),
    );
    const statement = {
      Effect: 'Allow',
      Action: 'ses:SendEmail',
      Resource: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':ses:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':identity/example.com',
          ],
        ],
      },
    };
    expect(sesStatements).toEqual([statement, statement]);
  });

  it('sends from the placeholder by default, with magic links opening the review application on the API stage', () => {
    const { fn } = byName(dev, 'request-magic-link');
    const environment = environmentOf(dev, fn);
    const restApiId = logicalIdOf(dev.stacks.service.api.restApi);

    expect(environment.EMAIL_FROM).toBe(PLACEHOLDER_EMAIL_FROM);
    // The function lives in a nested stack: the API's id is a parameter the service stack gives it.
    const [, parts] = (environment.APP_URL as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    expect(
      parts.map((part) => (typeof part === 'string' ? part : [...referencedLogicalIds(part)][0])),
    ).toEqual(['https://', restApiId, '.execute-api.', 'AWS::Region', '.', 'AWS::URLSuffix', '/dev/app']);
    // Only the API itself: the stage or deployment would close a cycle through the methods.
    expect(referencedResources(environment.APP_URL)).toEqual([restApiId]);
  });

  it('sends from the configured address and identity, linking to the configured app URL', () => {
    const { fn } = byName(prod, 'request-magic-link');
    const environment = environmentOf(prod, fn);
    const resources = allStatements(prod)
      .filter((statement) => actionsOf(statement).includes('ses:SendEmail'))
      .flatMap(resourcesOf);

    expect(environment.EMAIL_FROM).toBe('signin@mail.acme.example');
    expect(environment.APP_URL).toBe('https://app.acme.example');
    expect(JSON.stringify(resources)).toMatch(/:identity\/acme\.example"\]\]\}\]$/);
  });

  it('checks the email settings when the stack is synthesized', () => {
    expect(emailSettings()).toEqual({ from: 'noreply@example.com', identity: 'example.com' });
    expect(emailSettings({ from: 'ada@acme.example', identity: 'ada@acme.example' }).identity).toBe(
      'ada@acme.example',
    );
    expect(() => emailSettings({ from: 'Ada <ada@acme.example>' })).toThrow(/emailFrom/);
    expect(() => emailSettings({ from: 'ada@acme.example', identity: 'other.example' })).toThrow(
      /does not cover/,
    );
    expect(() => emailSettings({ appUrl: 'app.acme.example' })).toThrow(/appUrl/);
  });

  it('lets the authorizer update only lastUsedAt of API token items, asking for nothing back', () => {
    const authTableId = tableLogicalId(dev, 'Auth');
    const updates = statementsOf(dev, dev.stacks.service.api.authorizerFunction).filter((statement) =>
      actionsOf(statement).includes('dynamodb:UpdateItem'),
    );

    expect(updates.map((statement) => referencedResources(statement.Resource))).toEqual([[authTableId]]);
    expect(updates).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        // The table's ARN, imported from the stateful stack (not its indexes, not any other table).
        Resource: { 'Fn::ImportValue': expect.stringMatching(/:ExportsOutputFnGetAtt\w+Arn\w+$/) },
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APITOKEN#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
    ]);
  });

  it('lets the usage-key backfill update only the usage key attributes of team items, asking for nothing back', () => {
    const authTableId = tableLogicalId(dev, 'Auth');
    const backfill = handlerFunction(dev.stacks, USAGE_KEY_BACKFILL.entry);
    const updates = statementsOf(dev, backfill).filter((statement) =>
      actionsOf(statement).includes('dynamodb:UpdateItem'),
    );

    expect(updates.map((statement) => referencedResources(statement.Resource))).toEqual([[authTableId]]);
    expect(updates.map(({ Resource: _resource, ...statement }) => statement)).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TEAM#*'] },
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': ['pk', 'sk', 'usageKeyId', 'usageKeyValue', 'usageKeyPlanId'],
          },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
    ]);
  });

  it('lets only the usage-key backfill reach API Gateway: make and list API keys, put keys on the evaluation plan', () => {
    const planId = resourcesOfType(dev, 'AWS::ApiGateway::UsagePlan')[0]?.[0] ?? '';
    const gatewayStatements = (fn: ServiceFunction) =>
      statementsOf(dev, fn).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('apigateway:')),
      );
    const backfill = handlerFunction(dev.stacks, USAGE_KEY_BACKFILL.entry);
    const flat = (resource: unknown) => JSON.stringify(resource);

    for (const { name, fn } of functionsOf(dev.stacks))
      if (name !== USAGE_KEY_BACKFILL.entry) expect(gatewayStatements(fn), name).toEqual([]);
    const statements = gatewayStatements(backfill);
    expect(
      statements.map((statement) => [actionsOf(statement).sort(), resourcesOf(statement).length]),
    ).toEqual([
      [['apigateway:GET', 'apigateway:POST'], 1],
      [['apigateway:POST'], 1],
    ]);
    const [keys, planKeys] = statements.map((statement) => flat(resourcesOf(statement)[0]));
    // The account's API keys (a key is the account's, not an API's) and this one plan's keys.
    expect(keys).toMatch(
      /"arn:",\{"Ref":"AWS::Partition"\},":apigateway:",\{"Ref":"AWS::Region"\},"::\/apikeys"\]/,
    );
    expect(planKeys).toMatch(/::\/usageplans\/",\{"Ref":"\w+"\},"\/keys"\]/);
    expect(referencedLogicalIds(resourcesOf(statements[1] as PolicyStatement)[0])).toEqual(
      new Set(['AWS::Partition', 'AWS::Region', planId]),
    );
    // No apigateway:* and no Resource "*" (the role's one "*" is X-Ray's, checked with every role's).
    for (const statement of statementsOf(dev, backfill))
      expect(actionsOf(statement), flat(statement)).not.toContain('apigateway:*');
    for (const statement of statements) expect(resourcesOf(statement), flat(statement)).not.toContain('*');
  });

  it('lets the functions that name people read only emails and token names of user and token items', () => {
    const authTableId = tableLogicalId(dev, 'Auth');
    const naming = functionsOf(dev.stacks).filter(({ access }) => access.readsNames);
    expect(naming.map(({ name }) => name)).toContain('list-audit-events');
    for (const { name, fn, access } of naming) {
      const reads = statementsOf(dev, fn).filter((statement) =>
        referencedLogicalIds(statement.Resource).has(authTableId),
      );
      // Without `auth` access, the one statement on the auth table is the narrow read.
      if (access.auth) continue;
      expect(reads, name).toEqual([
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
          Resource: { 'Fn::ImportValue': expect.stringMatching(/:ExportsOutputFnGetAtt\w+Arn\w+$/) },
          Condition: {
            'ForAllValues:StringLike': {
              'dynamodb:LeadingKeys': ['USER#*', 'APITOKENID#*', 'APITOKEN#*'],
            },
            'ForAllValues:StringEquals': {
              'dynamodb:Attributes': ['pk', 'sk', 'email', 'name', 'teamId', 'tokenHash'],
            },
            StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
          },
        },
      ]);
    }
  });

  it('gives UpdateItem on the auth table only to readWrite functions and the token-use grant', () => {
    const authTableId = tableLogicalId(dev, 'Auth');
    for (const { name, fn, access } of functionsOf(dev.stacks)) {
      const updates = statementsOf(dev, fn).filter(
        (statement) =>
          actionsOf(statement).includes('dynamodb:UpdateItem') &&
          referencedLogicalIds(statement.Resource).has(authTableId),
      );
      const unconditioned = updates.filter((statement) => statement.Condition === undefined);
      const conditioned = updates.filter((statement) => statement.Condition !== undefined);

      expect(unconditioned.length > 0, name).toBe(access.auth === 'readWrite');
      expect(conditioned.length, name).toBe(
        (access.recordsTokenUse ? 1 : 0) + (access.keepsUsageKeys ? 1 : 0),
      );
    }
  });

  it('lets only the bulk evaluation create serving versions: PutItem of TEAM#*#SERVING items and their attributes', () => {
    const dataTableId = tableLogicalId(dev, 'Data');
    const starting: string[] = [];
    for (const { name, fn, access } of functionsOf(dev.stacks)) {
      const narrow = statementsOf(dev, fn).filter(
        (statement) =>
          statement.Condition !== undefined &&
          actionsOf(statement).includes('dynamodb:PutItem') &&
          referencedLogicalIds(statement.Resource).has(dataTableId),
      );
      expect(narrow.length, name).toBe(access.startsServingVersions ? 1 : 0);
      if (narrow.length === 0) continue;
      starting.push(name);
      expect(actionsOf(narrow[0] as PolicyStatement)).toEqual(['dynamodb:PutItem']);
      expect(narrow[0]?.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TEAM#*#SERVING'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'version', 'changedAt'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      });
    }
    expect(starting).toEqual(['evaluate-flags']);
  });

  it('gives the password-hashing memory to exactly the functions whose bundle calls scrypt', async () => {
    const entries = [
      ...OPERATION_FUNCTIONS.map(({ module }) => ({ name: module, file: operationEntryPath(module) })),
      ...[AUTHORIZER, SYNTHESIS_WORKER, DEAD_LETTER_HANDLER, RUN_SWEEPER].map(({ entry }) => ({
        name: entry,
        file: handlerEntryPath(entry),
      })),
    ];
    const hashing: string[] = [];
    for (const { name, file } of entries) {
      // Own code only (packages stay external), not minified: a call to scrypt survives tree-shaking
      // only when the function can reach it.
      const result = await build({
        entryPoints: [file],
        bundle: true,
        write: false,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        logLevel: 'silent',
      });
      if (/\bscrypt\(/.test(result.outputFiles[0]?.text ?? '')) hashing.push(name);
    }
    const declared = OPERATION_FUNCTIONS.filter(({ memoryMb }) => memoryMb === PASSWORD_HASHING_MEMORY_MB);

    expect(hashing.sort()).toEqual(declared.map(({ module }) => module).sort());
  }, 60_000);

  it('gives the functions that hash passwords 1024 MB, the OTLP ingest 1536 MB and 20 reserved concurrency, every other function its default', () => {
    const hashing = OPERATIONS.filter((operation) => operation.memoryMb === PASSWORD_HASHING_MEMORY_MB);

    expect(PASSWORD_HASHING_MEMORY_MB).toBe(1024);
    expect(hashing.map(moduleOf).sort()).toEqual(['change-password', 'log-in']);
    for (const { module, memoryMb, reservedConcurrency } of OPERATION_FUNCTIONS) {
      const sized = { 'change-password': 1024, 'log-in': 1024, 'ingest-otlp-traces': 1536 } as Record<
        string,
        number
      >;
      expect(memoryMb, module).toBe(sized[module] ?? DEFAULT_MEMORY_MB);
      expect(reservedConcurrency, module).toBe(module === 'ingest-otlp-traces' ? 20 : null);
    }
    const ingest = propertiesOf(dev, logicalIdOf(byName(dev, 'ingest-otlp-traces').fn.function));
    expect(ingest).toMatchObject({ MemorySize: 1536, ReservedConcurrentExecutions: 20 });
    for (const { name, fn, memorySize } of functionsOf(dev.stacks)) {
      expect(propertiesOf(dev, logicalIdOf(fn.function)).MemorySize, name).toBe(memorySize);
    }
    expect(propertiesOf(dev, logicalIdOf(byName(dev, 'log-in').fn.function)).MemorySize).toBe(1024);
    expect(propertiesOf(dev, logicalIdOf(byName(dev, 'change-password').fn.function)).MemorySize).toBe(1024);
  });
});

describe('API', () => {
  function methods(
    synthesized: Synthesized,
  ): { path: string; method: string; properties: Record<string, unknown> }[] {
    const paths = resourcePaths(synthesized.resources);
    return resourcesOfType(synthesized, 'AWS::ApiGateway::Method').map(([, resource]) => {
      const properties = resource.Properties ?? {};
      const resourceRef = (properties.ResourceId as { Ref?: string }).Ref;
      return {
        path: resourceRef ? (paths.get(resourceRef) ?? '?') : '/',
        method: String(properties.HttpMethod),
        properties,
      };
    });
  }

  it("creates exactly one method per operation, proxying to its module's function", () => {
    const created = methods(dev);

    expect(created).toHaveLength(OPERATIONS.length);
    for (const operation of OPERATIONS) {
      const method = created.find(
        (candidate) => candidate.path === operation.path && candidate.method === operation.method,
      );
      const fn = dev.stacks.service.routeFunctions.get(moduleOf(operation));
      if (!method || !fn) throw new Error(`no method or function for ${methodKey(operation)}`);
      const integration = method.properties.Integration as { Type: string; Uri: unknown };

      expect(integration.Type).toBe('AWS_PROXY');
      expect(referencedLogicalIds(integration.Uri).has(logicalIdOf(fn.function))).toBe(true);
      expect(String(propertiesOf(dev, logicalIdOf(fn.function)).Description).split(', ')).toContain(
        methodKey(operation),
      );
    }
  });

  it('serves the review application at /app and /app/{proxy+} from one public function that may read nothing', () => {
    const app = methods(dev).filter((method) => method.path === '/app' || method.path === '/app/{proxy+}');
    const serveApp = dev.stacks.service.routeFunctions.get('serve-app');
    if (!serveApp) throw new Error('no serve-app function');
    const served = OPERATIONS.filter((operation) => moduleOf(operation) === 'serve-app');

    expect(app.map((method) => `${method.method} ${method.path}`).sort()).toEqual([
      'GET /app',
      'GET /app/{proxy+}',
    ]);
    expect(served.map((operation) => [operation.name, methodKey(operation)])).toEqual([
      ['serve-app', 'GET /app'],
      ['serve-app-files', 'GET /app/{proxy+}'],
    ]);
    // Its bundle embeds the review application, which web/build.ts builds right before bundling.
    for (const operation of served) expect(operation.buildsFirst, operation.name).toEqual(['web/build.ts']);
    // So does get-openapi's the OpenAPI document (lambdas/operations/openapi-build.ts).
    expect(
      OPERATIONS.filter((operation) => operation.buildsFirst !== undefined)
        .map(moduleOf)
        .sort(),
    ).toEqual(['get-openapi', 'serve-app', 'serve-app']);
    expect(buildScriptCommand('web/build.ts')).toBe(
      `'${process.execPath}' '--import' 'tsx' '${REPO_ROOT}/web/build.ts'`,
    );
    for (const method of app) {
      const integration = method.properties.Integration as { Uri: unknown };
      expect(method.properties.AuthorizationType).toBe('NONE');
      expect(referencedLogicalIds(integration.Uri).has(logicalIdOf(serveApp.function))).toBe(true);
    }
    // The script and styles travel gzipped to browsers that accept it.
    expect(propertiesOf(dev, logicalIdOf(dev.stacks.service.api.restApi)).MinimumCompressionSize).toBe(1024);
    // No table, queue, secret or mail: only its own log stream and its traces.
    expect(statementsOf(dev, serveApp).flatMap(actionsOf).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    expect(Object.keys(environmentOf(dev, serveApp)).sort()).toEqual([
      'LOG_LEVEL',
      'POWERTOOLS_SERVICE_NAME',
    ]);
  });

  it.each(OPERATIONS.map((operation) => [methodKey(operation), operation] as const))(
    '%s has the authorizer exactly when its operation is not public',
    (_, operation) => {
      const authorizerId = logicalIdOf(dev.stacks.service.api.node.findChild('RequestAuthorizer'));
      const method = methods(dev).find((m) => m.path === operation.path && m.method === operation.method);
      if (!method) throw new Error(`no method for ${methodKey(operation)}`);

      if (operation.public === undefined) {
        expect(method.properties.AuthorizationType).toBe('CUSTOM');
        expect(method.properties.AuthorizerId).toEqual({ Ref: authorizerId });
      } else {
        expect(method.properties.AuthorizationType).toBe('NONE');
        expect(method.properties.AuthorizerId).toBeUndefined();
      }
    },
  );

  it('has a written reason for every public operation', () => {
    const publicOperations = OPERATIONS.filter((operation) => operation.public !== undefined);

    expect(publicOperations.map(methodKey)).toEqual(
      expect.arrayContaining(['POST /auth/login', 'POST /auth/magic-link', 'GET /auth/magic-link']),
    );
    for (const operation of publicOperations) {
      expect(operation.public?.trim().length, operation.name).toBeGreaterThanOrEqual(40);
    }
  });

  it('routes the local gateway like the stack: the same methods, modules and authorizer', () => {
    const authorized = new Map(
      methods(dev).map((method) => [
        `${method.method} ${method.path}`,
        method.properties.AuthorizationType === 'CUSTOM',
      ]),
    );

    expect(
      localRoutes()
        .map((route) => [methodKey(route), route.entry, route.authorized] as const)
        .sort(),
    ).toEqual(
      OPERATIONS.map(
        (operation) =>
          [methodKey(operation), moduleOf(operation), authorized.get(methodKey(operation))] as const,
      ).sort(),
    );
  });

  it("makes an operation public only with its declared reason, which its method's acknowledgements carry", () => {
    // A fake: get-synthesis-run (a real module, in case bundling ran) declared public.
    const reason = 'A test operation that a caller may reach without a credential, for this assertion only.';
    const madePublic = defineOperation({ ...getSynthesisRun, public: reason });
    const operations = OPERATIONS.map((operation) =>
      operation === getSynthesisRun ? madePublic : operation,
    );
    const stack = buildStacks(testApp(), 'PublicByDeclaration', { stage: 'dev', operations }).service;
    const method = stack.node
      .findAll()
      .find((construct) => construct.node.path === methodPath('PublicByDeclaration', madePublic));
    if (!method) throw new Error(`no method for ${methodKey(madePublic)}`);
    const acknowledgements = Object.assign(
      {},
      ...method.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .map((entry) => entry.data as Record<string, string>),
    ) as Record<string, string>;
    const cfnMethod = Template.fromStack(stack).toJSON().Resources[logicalIdOf(method)] as CfnResource;

    expect(cfnMethod.Properties?.AuthorizationType).toBe('NONE');
    expect(cfnMethod.Properties?.AuthorizerId).toBeUndefined();
    expect(acknowledgements['AwsSolutions::AwsSolutions-APIG4']).toBe(
      `GET /synthesis-runs/{id}: Public by design: ${reason}`,
    );
    const cognito = acknowledgements['AwsSolutions::AwsSolutions-COG4'] ?? '';
    expect(cognito).toContain('takes no credential');
    expect(cognito.endsWith(`Public by design: ${reason}`), cognito).toBe(true);
  });

  it('uses one uncached REQUEST authorizer without identity sources', () => {
    const authorizers = resourcesOfType(dev, 'AWS::ApiGateway::Authorizer');
    const properties = authorizers[0]?.[1].Properties ?? {};

    expect(authorizers).toHaveLength(1);
    expect(properties.Type).toBe('REQUEST');
    expect(properties.AuthorizerResultTtlInSeconds).toBe(0);
    // Empty: API Gateway then calls the authorizer for every request, whatever it carries.
    expect(properties.IdentitySource ?? '').toBe('');
    expect(
      referencedLogicalIds(properties.AuthorizerUri).has(
        logicalIdOf(dev.stacks.service.api.authorizerFunction.function),
      ),
    ).toBe(true);
  });

  it('limits each caller with a WAF web ACL on the stage: per Authorization header, per session cookie, per IP on /auth/*', () => {
    const [aclId, acl] = resourcesOfType(dev, 'AWS::WAFv2::WebACL')[0] ?? [];
    const rules = (acl?.Properties?.Rules ?? []) as Array<{
      Name: string;
      Action: {
        Block: { CustomResponse: { ResponseCode: number; ResponseHeaders: Array<{ Name: string }> } };
      };
      Statement: {
        RateBasedStatement: {
          Limit: number;
          AggregateKeyType: string;
          CustomKeys?: Array<{ Header?: { Name: string; TextTransformations: unknown[] } }>;
        };
      };
    }>;

    expect(rules.map((rule) => [rule.Name, rule.Statement.RateBasedStatement.Limit])).toEqual([
      ['PerAuthorizationHeader', DEFAULT_LIMITS.requestsPerSecondPerCredential * 60],
      ['PerSessionCookie', DEFAULT_LIMITS.requestsPerSecondPerCredential * 60],
      ['AuthPerClientIp', DEFAULT_LIMITS.authRequestsPerMinutePerIp],
    ]);
    // Evaluations (serving-configuration, OFREP) are left to the evaluation plan's per-team
    // throttle: no credential rule counts exactly their routes after the stage's name.
    const evaluationPaths = {
      OrStatement: {
        Statements: [
          '^/dev/pipelines/[^/]+/serving-configuration$',
          '^/dev/ofrep/v1/evaluate/flags/[^/]+$',
          '^/dev/ofrep/v1/evaluate/flags$',
        ].map((regexString) => ({
          RegexMatchStatement: {
            FieldToMatch: { UriPath: {} },
            RegexString: regexString,
            TextTransformations: [{ Priority: 0, Type: 'NONE' }],
          },
        })),
      },
    };
    const [serving] = evaluationPaths.OrStatement.Statements.map(
      (statement) => new RegExp(statement.RegexMatchStatement.RegexString),
    );
    expect(serving?.test('/dev/pipelines/p1/serving-configuration')).toBe(true);
    expect(serving?.test('/dev/pipelines/p1/executions/serving-configuration')).toBe(false);
    const scopes = rules.map(
      (rule) => (rule.Statement.RateBasedStatement as { ScopeDownStatement?: unknown }).ScopeDownStatement,
    );
    expect(scopes[0]).toEqual({ NotStatement: { Statement: evaluationPaths } });
    expect(scopes[1]).toEqual({ NotStatement: { Statement: evaluationPaths } });
    for (const rule of rules) {
      expect(rule.Action.Block.CustomResponse.ResponseCode).toBe(429);
      expect(rule.Action.Block.CustomResponse.ResponseHeaders).toEqual([
        { Name: 'retry-after', Value: '60' },
        { Name: 'Cache-Control', Value: 'no-store' },
        { Name: 'X-Content-Type-Options', Value: 'nosniff' },
        { Name: 'Strict-Transport-Security', Value: 'max-age=31536000; includeSubDomains' },
      ]);
    }
    // `Bearer x`, `bearer x` and `BEARER  x` are one caller, in one bucket.
    expect(rules[0]?.Statement.RateBasedStatement.CustomKeys).toEqual([
      {
        Header: {
          Name: 'authorization',
          TextTransformations: [
            { Priority: 0, Type: 'LOWERCASE' },
            { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
          ],
        },
      },
    ]);
    const association = resourcesOfType(dev, 'AWS::WAFv2::WebACLAssociation')[0]?.[1].Properties ?? {};
    expect(referencedLogicalIds(association.WebACLArn)).toEqual(new Set([aclId]));
    const synthesize = dev.stacks.service.routeFunctions.get('synthesize-pipeline');
    expect(environmentOf(dev, synthesize as ServiceFunction).SYNTHESIS_RUNS_PER_TEAM_PER_HOUR).toBe(
      String(DEFAULT_LIMITS.synthesisRunsPerTeamPerHour),
    );
  });

  it('counts evaluations per team: a usage plan at the team evaluation rate, a key per team named by the authorizer', () => {
    const plans = resourcesOfType(dev, 'AWS::ApiGateway::UsagePlan');
    const plan = plans[0]?.[1].Properties ?? {};
    const restApi = resourcesOfType(dev, 'AWS::ApiGateway::RestApi')[0];
    const stageId = resourcesOfType(dev, 'AWS::ApiGateway::Stage')[0]?.[0];

    expect(plans).toHaveLength(1);
    expect(plan.Throttle).toEqual({
      RateLimit: DEFAULT_LIMITS.servingRequestsPerSecondPerTeam,
      BurstLimit: DEFAULT_LIMITS.servingBurstPerTeam,
    });
    expect(plan.Quota).toBeUndefined();
    const [apiStage] = plan.ApiStages as Array<{ ApiId: unknown; Stage: unknown }>;
    expect(referencedLogicalIds(apiStage?.ApiId)).toEqual(new Set([restApi?.[0]]));
    expect(referencedLogicalIds(apiStage?.Stage)).toEqual(new Set([stageId]));
    // The key comes from the authorizer's answer, never from a header a caller could send.
    expect(restApi?.[1].Properties?.ApiKeySourceType).toBe('AUTHORIZER');
    // The stack makes one key, the shared one: each team's own is made with the team, or by the backfill.
    expect(resourcesOfType(dev, 'AWS::ApiGateway::ApiKey')).toHaveLength(1);
  });

  it("keeps the web ACL's association in the service template and API Gateway's logging role in the stateful one", () => {
    const typesOf = (stack: Stack) =>
      Object.values(Template.fromStack(stack).toJSON().Resources).map(
        (resource) => (resource as CfnResource).Type,
      );
    const service = typesOf(dev.stacks.service);
    const stateful = typesOf(dev.stacks.stateful);
    const [, account] = resourcesOfType(dev, 'AWS::ApiGateway::Account')[0] ?? [];

    // Moving the association to another template would replace it, and deleting the old one
    // disassociates the stage from any web ACL, the new one included.
    expect(service).toContain('AWS::WAFv2::WebACLAssociation');
    expect(service).toContain('AWS::WAFv2::WebACL');
    expect(service).not.toContain('AWS::ApiGateway::Account');
    expect(stateful.filter((type) => type === 'AWS::ApiGateway::Account')).toHaveLength(1);
    const [[roleId = '', role] = []] = resourcesOfType(dev, 'AWS::IAM::Role').filter(([id]) =>
      referencedLogicalIds(account?.Properties?.CloudWatchRoleArn).has(id),
    );
    expect(roleId).not.toBe('');
    expect(JSON.stringify(role?.Properties?.AssumeRolePolicyDocument)).toContain('apigateway.amazonaws.com');
    expect(role?.DeletionPolicy).toBe('Retain');
  });

  it('puts one shared key on the plan and gives its value to the authorizer for teams without a key of their own', () => {
    const [[keyId, key] = ['', {} as CfnResource]] = resourcesOfType(dev, 'AWS::ApiGateway::ApiKey');
    const planId = resourcesOfType(dev, 'AWS::ApiGateway::UsagePlan')[0]?.[0];
    const planKeys = resourcesOfType(dev, 'AWS::ApiGateway::UsagePlanKey').map(([, planKey]) => ({
      key: referencedLogicalIds(planKey.Properties?.KeyId),
      plan: referencedLogicalIds(planKey.Properties?.UsagePlanId),
    }));
    const value = key.Properties?.Value;
    const authorizerEnvironment = environmentOf(dev, dev.stacks.service.api.authorizerFunction);

    expect(planKeys).toEqual([{ key: new Set([keyId]), plan: new Set([planId]) }]);
    expect(key.Properties?.Enabled).toBe(true);
    // A plain string fixed at synthesis (API Gateway wants 20 characters at least), the authorizer's.
    expect(typeof value).toBe('string');
    expect(String(value).length).toBeGreaterThanOrEqual(20);
    expect(authorizerEnvironment.EVALUATION_FALLBACK_KEY).toBe(value);
    // The same on every synthesis of a stack, another for another stack.
    const again = buildStacks(testApp(), 'Test-dev', { stage: 'dev' });
    const other = buildStacks(testApp(), 'Other', { stage: 'dev' });
    const keyValueOf = (stacks: PipelineSynthesisStacks) =>
      Template.fromStack(stacks.service.api.evaluationPlan.stack).toJSON().Resources[
        logicalIdOf(stacks.service.api.sharedEvaluationKey)
      ].Properties.Value;
    expect(keyValueOf(again)).toBe(value);
    expect(keyValueOf(other)).not.toBe(value);
  });

  it('runs the usage-key backfill on each deploy, for the evaluation plan, until it answers done', () => {
    const backfills = resourcesOfType(dev, 'Custom::UsageKeyBackfill');
    const planId = resourcesOfType(dev, 'AWS::ApiGateway::UsagePlan')[0]?.[0];
    const backfill = handlerFunction(dev.stacks, USAGE_KEY_BACKFILL.entry);
    const properties = backfills[0]?.[1].Properties ?? {};
    // The Provider framework's functions, given the backfill's as onEvent and isComplete.
    const framework = resourcesOfType(dev, 'AWS::Lambda::Function').filter(([, fn]) =>
      JSON.stringify(fn.Properties?.Environment ?? {}).includes('USER_ON_EVENT_FUNCTION_ARN'),
    );
    const userFunctions = framework.map(([, fn]) => {
      const variables =
        (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      return [variables.USER_ON_EVENT_FUNCTION_ARN, variables.USER_IS_COMPLETE_FUNCTION_ARN].map((arn) =>
        referencedLogicalIds(arn),
      );
    });

    expect(backfills).toHaveLength(1);
    expect(referencedLogicalIds(properties.usagePlanId)).toEqual(new Set([planId]));
    expect(referencedLogicalIds(environmentOf(dev, backfill).USAGE_PLAN_ID)).toEqual(new Set([planId]));
    expect(userFunctions.length).toBeGreaterThan(0);
    for (const targets of userFunctions)
      for (const target of targets) expect(target).toEqual(new Set([logicalIdOf(backfill.function)]));
    // A new value on every synthesis, so CloudFormation updates (runs) it on every deploy.
    const again = buildStacks(testApp(), 'Test-dev', { stage: 'dev' });
    const deploymentOf = (stacks: PipelineSynthesisStacks) => {
      const jobs = Template.fromStack(
        handlerFunction(stacks, USAGE_KEY_BACKFILL.entry).function.stack,
      ).findResources('Custom::UsageKeyBackfill');
      return Object.values(jobs)[0]?.Properties?.deployment;
    };
    expect(typeof properties.deployment).toBe('string');
    expect(deploymentOf(again)).not.toBe(properties.deployment);
  });

  it('requires the team key on exactly the evaluation methods (serving-configuration, OFREP)', () => {
    const evaluations = OPERATIONS.filter((operation) => operation.rateLimit === 'evaluation').map(
      (operation) => `${operation.method} ${operation.path}`,
    );
    const keyed = methods(dev)
      .filter((method) => method.properties.ApiKeyRequired === true)
      .map((method) => `${method.method} ${method.path}`);

    expect(evaluations.sort()).toEqual([
      'GET /pipelines/{pipelineId}/serving-configuration',
      'POST /ofrep/v1/evaluate/flags',
      'POST /ofrep/v1/evaluate/flags/{key}',
    ]);
    expect(keyed.sort()).toEqual(evaluations);
    expect(
      JSON.parse(String(environmentOf(dev, dev.stacks.service.api.authorizerFunction).EVALUATION_ROUTES)),
    ).toEqual(
      OPERATIONS.filter((operation) => operation.rateLimit === 'evaluation').map(
        (operation) => operation.path,
      ),
    );
  });

  it('refuses to synthesize a public operation counted as an evaluation', () => {
    // A fake: get-synthesis-run (a real module, in case bundling ran) declared public and an evaluation.
    const publicEvaluation = defineOperation({
      ...getSynthesisRun,
      public: 'a test',
      rateLimit: 'evaluation',
    });
    const operations = OPERATIONS.map((operation) =>
      operation === getSynthesisRun ? publicEvaluation : operation,
    );

    expect(() => buildStacks(testApp(), 'PublicEvaluation', { stage: 'dev', operations })).toThrow(
      /public, so no team's evaluation rate can count it/,
    );
  });

  it('throttles, traces, meters and access-logs the stage without logging data', () => {
    const stage = resourcesOfType(dev, 'AWS::ApiGateway::Stage')[0]?.[1].Properties ?? {};
    const accessLog = stage.AccessLogSetting as { DestinationArn: unknown; Format: string };

    expect(stage.StageName).toBe('dev');
    expect(stage.TracingEnabled).toBe(true);
    expect(stage.MethodSettings).toEqual([
      {
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: DEFAULT_LIMITS.stageRequestsPerSecond,
        ThrottlingBurstLimit: DEFAULT_LIMITS.stageBurst,
        MetricsEnabled: true,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
      },
    ]);
    expect(referencedLogicalIds(accessLog.DestinationArn).size).toBe(1);
    expect(JSON.parse(accessLog.Format)).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
    });
    expect(accessLog.Format).not.toMatch(/header|authorization|cookie/i);
  });

  it.each([
    ['UNAUTHORIZED', '401', 'UNAUTHORIZED'],
    ['ACCESS_DENIED', '403', 'FORBIDDEN'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND'],
    ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE'],
    ['THROTTLED', '429', 'RATE_LIMITED'],
    ['INVALID_API_KEY', '403', 'FORBIDDEN'],
    ['DEFAULT_4XX', undefined, 'VALIDATION_ERROR'],
    ['DEFAULT_5XX', undefined, 'INTERNAL_ERROR'],
  ])('answers the %s gateway response with status %s and error %s', (type, status, error) => {
    const response = resourcesOfType(dev, 'AWS::ApiGateway::GatewayResponse').find(
      ([, resource]) => resource.Properties?.ResponseType === type,
    )?.[1].Properties;
    const templates = response?.ResponseTemplates as Record<string, string>;
    const body = JSON.parse(templates['application/json'] ?? '') as Record<string, unknown>;

    expect(response?.StatusCode).toBe(status);
    expect(body.error).toBe(error);
    expect(typeof body.message).toBe('string');
  });

  it('answers every gateway response with a JSON {error, message} body and nothing else', () => {
    const responses = resourcesOfType(dev, 'AWS::ApiGateway::GatewayResponse');

    expect(responses.length).toBeGreaterThanOrEqual(7);
    for (const [, response] of responses) {
      const properties = response.Properties ?? {};
      const templates = properties.ResponseTemplates as Record<string, string>;

      expect(Object.keys(templates)).toEqual(['application/json']);
      expect(Object.keys(JSON.parse(templates['application/json'] ?? '{}')).sort()).toEqual([
        'error',
        'message',
      ]);
      expect(properties.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json'",
        'gatewayresponse.header.Cache-Control': "'no-store'",
        'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
        'gatewayresponse.header.Strict-Transport-Security': "'max-age=31536000; includeSubDomains'",
      });
    }
  });

  it('tells a caller over the stage’s or its team’s evaluation rate when to retry', () => {
    const throttled = resourcesOfType(dev, 'AWS::ApiGateway::GatewayResponse').find(
      ([, resource]) => resource.Properties?.ResponseType === 'THROTTLED',
    )?.[1].Properties;

    expect(throttled?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.Retry-After': "'1'",
    });
  });

  it('challenges with WWW-Authenticate: Bearer on the gateway’s 401 only', () => {
    const responses = resourcesOfType(dev, 'AWS::ApiGateway::GatewayResponse').map(
      ([, response]) => response.Properties ?? {},
    );
    const challenges = responses.filter(
      (properties) =>
        (properties.ResponseParameters as Record<string, string>)['gatewayresponse.header.WWW-Authenticate'],
    );

    expect(challenges.map((properties) => properties.ResponseType)).toEqual(['UNAUTHORIZED']);
    expect(challenges[0]?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.WWW-Authenticate': "'Bearer'",
    });
  });

  it('answers a Deny (ACCESS_DENIED) with the authorizer’s reason as the message', () => {
    const response = resourcesOfType(dev, 'AWS::ApiGateway::GatewayResponse').find(
      ([, resource]) => resource.Properties?.ResponseType === 'ACCESS_DENIED',
    )?.[1].Properties;
    const templates = response?.ResponseTemplates as Record<string, string>;

    expect(JSON.parse(templates['application/json'] ?? '')).toEqual({
      error: 'FORBIDDEN',
      message: `$context.authorizer.${CSRF_REFUSAL_CONTEXT_KEY}`,
    });
  });
});

describe('alarms and outputs', () => {
  it('alarms on any message in the DLQ and on failed synthesis jobs counted by the worker', () => {
    const alarms = resourcesOfType(dev, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
    const dlqAlarm = alarms.find(
      (alarm) =>
        alarm.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        referencedLogicalIds(alarm.Dimensions).has(
          logicalIdOf(deadLettersOf(dev, SYNTHESIS_WORKER.trigger.queue)),
        ),
    );
    const workerAlarm = alarms.find((alarm) => alarm.MetricName === METRIC.jobErrors);

    expect(dlqAlarm).toMatchObject({
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(referencedLogicalIds(dlqAlarm?.Dimensions)).toEqual(
      new Set([logicalIdOf(deadLettersOf(dev, SYNTHESIS_WORKER.trigger.queue))]),
    );
    // Lambda's Errors metric never sees a record failed inside a partial batch response: the
    // alarm watches the count the worker emits (EMF) for every failed record.
    expect(workerAlarm).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [{ Name: 'service', Value: SERVICE_NAME }],
      Statistic: 'Sum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on every dead-letter queue, on each declared wait, and on the API, the authorizer and the worker, each with a reason, notifying the one alarm topic', () => {
    const topicId = logicalIdOf(dev.stacks.stateful.alarmTopic);
    const alarms = resourcesOfType(dev, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
    const metricOf = (alarm: Record<string, unknown>) =>
      (alarm.MetricName as string | undefined) ??
      JSON.stringify((alarm.Metrics as Array<{ Expression?: string }>).find((m) => m.Expression)?.Expression);
    const waits = QUEUES.filter((queue) => queue.kind === 'work' && queue.oldestMessageAlarm !== undefined);

    expect(alarms.map(metricOf).sort()).toEqual(
      [
        ...QUEUES.map(() => 'ApproximateNumberOfMessagesVisible'),
        ...waits.map(() => 'ApproximateAgeOfOldestMessage'),
        'Errors',
        'Errors',
        'Latency',
        METRIC.jobErrors,
        METRIC.monitorJudgeRuns,
        JSON.stringify(
          `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
        ),
      ].sort(),
    );
    // Each alarm on visible messages watches one queue of dead letters, and every one is watched.
    const watched = alarms
      .filter((alarm) => alarm.MetricName === 'ApproximateNumberOfMessagesVisible')
      .flatMap((alarm) => [...referencedLogicalIds(alarm.Dimensions)]);
    expect(watched.sort()).toEqual(
      [...dev.stacks.stateful.queues.values()]
        .map((deployed) => logicalIdOf(deployed.deadLetterQueue ?? deployed.queue))
        .sort(),
    );
    for (const alarm of alarms) {
      expect(String(alarm.AlarmDescription).length, metricOf(alarm)).toBeGreaterThan(40);
      expect(referencedLogicalIds(alarm.AlarmActions)).toEqual(new Set([topicId]));
      expect(referencedLogicalIds(alarm.OKActions)).toEqual(new Set([topicId]));
    }
    const latency = alarms.find((alarm) => alarm.MetricName === 'Latency');
    expect(latency).toMatchObject({ ExtendedStatistic: 'p99', Threshold: ALARM_THRESHOLDS.apiP99LatencyMs });
    const errorAlarms = alarms.filter((alarm) => alarm.MetricName === 'Errors');
    expect(errorAlarms.flatMap((alarm) => [...referencedLogicalIds(alarm.Dimensions)]).sort()).toEqual(
      [
        logicalIdOf(dev.stacks.service.api.authorizerFunction.function),
        logicalIdOf(handlerFunction(dev.stacks, MONITOR_JUDGE.entry).function),
      ].sort(),
    );
    const age = alarms.find((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage');
    const [wait] = waits;
    expect(age?.Threshold).toBe(wait?.kind === 'work' ? wait.oldestMessageAlarm?.afterSeconds : undefined);
  });

  it("alarms when the monitors' judge fails or stops: its errors, and a five-minute period without a pass, missing data breaching", () => {
    const alarms = resourcesOfType(dev, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
    const judgeId = logicalIdOf(handlerFunction(dev.stacks, MONITOR_JUDGE.entry).function);
    const errors = alarms.find(
      (alarm) => alarm.MetricName === 'Errors' && referencedLogicalIds(alarm.Dimensions).has(judgeId),
    );
    expect(errors).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Period: 300,
      Threshold: ALARM_THRESHOLDS.monitorJudgeErrors,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const silent = alarms.find((alarm) => alarm.MetricName === METRIC.monitorJudgeRuns);
    expect(silent).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'breaching',
    });
    // The judge runs every minute: five periods of its rate fit in the alarm's period.
    expect(scheduleOf(MONITOR_JUDGE)?.everyMinutes).toBe(1);
  });

  it('subscribes the alarm email only when the stack is given one, to a topic CloudWatch can publish to', () => {
    const subscriptions = (synthesized: Synthesized) =>
      resourcesOfType(synthesized, 'AWS::SNS::Subscription').map(([, sub]) => sub.Properties ?? {});
    expect(subscriptions(dev)).toEqual([]);
    expect(subscriptions(prod)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@acme.example' }),
    ]);
    const topic = propertiesOf(dev, logicalIdOf(dev.stacks.stateful.alarmTopic));
    const [[keyId, key]] = resourcesOfType(dev, 'AWS::KMS::Key') as [[string, CfnResource]];
    expect(referencedLogicalIds(topic.KmsMasterKeyId)).toEqual(new Set([keyId]));
    expect(key.Properties?.EnableKeyRotation).toBe(true);
    expect(JSON.stringify(key.Properties?.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
  });

  it('builds a dashboard with the alarms and every figure the service emits', () => {
    const [[, dashboard]] = resourcesOfType(dev, 'AWS::CloudWatch::Dashboard') as [[string, CfnResource]];
    const body = JSON.stringify(dashboard.Properties?.DashboardBody);
    for (const name of Object.values(METRIC)) expect(body, name).toContain(name);
    for (const name of ['ApproximateAgeOfOldestMessage', 'Latency', '5XXError'])
      expect(body, name).toContain(name);
    // The alarm status widget shows every alarm.
    for (const [alarmId] of resourcesOfType(dev, 'AWS::CloudWatch::Alarm')) expect(body).toContain(alarmId);
  });

  it('runs the stuck-run sweeper on a schedule', () => {
    const rules = resourcesOfType(dev, 'AWS::Events::Rule').map(([, rule]) => rule.Properties ?? {});
    const sweeperId = logicalIdOf(handlerFunction(dev.stacks, RUN_SWEEPER.entry).function);
    const rule = rules.find((candidate) =>
      (candidate.Targets as Array<{ Arn: unknown }>).some((target) =>
        referencedLogicalIds(target.Arn).has(sweeperId),
      ),
    );

    const minutes = scheduleOf(RUN_SWEEPER)?.everyMinutes;
    expect(rule).toMatchObject({
      // CDK writes the singular for one minute (the sweeper also judges rollouts, every minute).
      ScheduleExpression: minutes === 1 ? 'rate(1 minute)' : `rate(${minutes} minutes)`,
      State: 'ENABLED',
    });
  });

  it('runs each scheduled handler on its declared rate, and no other rule exists', () => {
    const rules = resourcesOfType(dev, 'AWS::Events::Rule').map(([, rule]) => rule.Properties ?? {});
    const scheduled = HANDLERS.filter((handler) => scheduleOf(handler) !== undefined);

    expect(rules).toHaveLength(scheduled.length);
    for (const handler of scheduled) {
      const fnId = logicalIdOf(handlerFunction(dev.stacks, handler.entry).function);
      const rule = rules.find((candidate) =>
        (candidate.Targets as Array<{ Arn: unknown }>).some((target) =>
          referencedLogicalIds(target.Arn).has(fnId),
        ),
      );
      const minutes = scheduleOf(handler)?.everyMinutes;
      // CDK writes whole hours and single units as such: rate(1 minute), rate(1 hour).
      const expression =
        minutes === 1
          ? 'rate(1 minute)'
          : minutes !== undefined && minutes % 60 === 0
            ? `rate(${minutes / 60} hour${minutes === 60 ? '' : 's'})`
            : `rate(${minutes} minutes)`;
      expect(rule?.ScheduleExpression, handler.entry).toBe(expression);
    }
  });

  it('outputs the API URL from the service stack, the table names and the queue URLs from the stateful one', () => {
    const stateful = Template.fromStack(dev.stacks.stateful).toJSON().Outputs as Record<
      string,
      { Value: unknown }
    >;
    const service = Template.fromStack(dev.stacks.service).toJSON().Outputs as Record<
      string,
      { Value: unknown }
    >;

    expect(Object.keys(stateful)).toEqual(
      expect.arrayContaining([
        'RunsTableName',
        'DataTableName',
        'AuthTableName',
        'SynthesisJobsQueueUrl',
        'AlarmTopicArn',
        'EventBusArn',
      ]),
    );
    expect(stateful.RunsTableName?.Value).toEqual({ Ref: tableLogicalId(dev, 'Runs') });
    expect(stateful.AuthTableName?.Value).toEqual({ Ref: tableLogicalId(dev, 'Auth') });
    expect(stateful.SynthesisJobsQueueUrl?.Value).toEqual({
      Ref: logicalIdOf(queueOf(dev, SYNTHESIS_WORKER.trigger.queue).queue),
    });
    expect(JSON.stringify(service.ApiUrl?.Value)).toContain('execute-api');
    expect(referencedLogicalIds(service.EvaluationUsagePlanId?.Value)).toEqual(
      new Set([resourcesOfType(dev, 'AWS::ApiGateway::UsagePlan')[0]?.[0]]),
    );
  });
});

describe('the per-batch guardrail', () => {
  const judgeRole = () => logicalIdOf(handlerFunction(dev.stacks, GUARDRAIL_JUDGE.entry).role);
  const queueId = () => logicalIdOf(queueOf(dev, GUARDRAIL_JUDGE.trigger.queue).queue);

  it('queues checks with a redrive to an encrypted, TLS-only DLQ that an alarm watches', () => {
    const queue = propertiesOf(dev, logicalIdOf(queueOf(dev, GUARDRAIL_JUDGE.trigger.queue).queue));
    const dlqId = logicalIdOf(deadLettersOf(dev, GUARDRAIL_JUDGE.trigger.queue));

    expect(queue).toMatchObject({
      VisibilityTimeout: 6 * GUARDRAIL_JUDGE.timeoutSeconds,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        maxReceiveCount: MAX_RECEIVE_COUNT,
        deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      },
    });
    expect(propertiesOf(dev, dlqId)).toMatchObject({
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    for (const queueId of [logicalIdOf(queueOf(dev, GUARDRAIL_JUDGE.trigger.queue).queue), dlqId]) {
      const policy = resourcesOfType(dev, 'AWS::SQS::QueuePolicy').find(([, resource]) =>
        referencedLogicalIds(resource.Properties?.Queues).has(queueId),
      );
      expect(policyStatements(policy?.[1])).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
    const alarm = resourcesOfType(dev, 'AWS::CloudWatch::Alarm')
      .map(([, resource]) => resource.Properties ?? {})
      .find((properties) => referencedLogicalIds(properties.Dimensions).has(dlqId));
    expect(alarm).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    expect(referencedLogicalIds(alarm?.AlarmActions)).toEqual(
      new Set([logicalIdOf(dev.stacks.stateful.alarmTopic)]),
    );
  });

  it('isolates the webhook lanes: a queue, a mapping and a concurrency each; the fan-out and the fast lane send to the slow one', () => {
    const lanes = [WEBHOOK_DELIVERER, WEBHOOK_SLOW_DELIVERER].map((handler) => ({
      mapping: mappingsOf(handlerFunction(dev.stacks, handler.entry).function)[0],
      queue: logicalIdOf(queueOf(dev, handler.trigger.queue).queue),
    }));
    const [fast, slow] = lanes;
    const slowSenders = rolesWithStatement(
      dev,
      (statement) =>
        actionsOf(statement).includes('sqs:SendMessage') &&
        referencedLogicalIds(statement.Resource).has(slow?.queue ?? ''),
    );

    expect(fast?.queue).not.toBe(slow?.queue);
    expect(referencedResources(fast?.mapping?.EventSourceArn)).toEqual([fast?.queue]);
    expect(referencedResources(slow?.mapping?.EventSourceArn)).toEqual([slow?.queue]);
    expect(fast?.mapping).toMatchObject({ ScalingConfig: { MaximumConcurrency: 25 } });
    expect(slow?.mapping).toMatchObject({
      ScalingConfig: { MaximumConcurrency: 10 },
      MaximumBatchingWindowInSeconds: 1,
    });
    expect(slowSenders).toEqual(
      [EVENT_DELIVERER.entry, WEBHOOK_DELIVERER.entry]
        .map((entry) => logicalIdOf(handlerFunction(dev.stacks, entry).role))
        .sort(),
    );
  });

  it('feeds the judge in coalesced batches: a batching window, a bounded concurrency, partial failures', () => {
    const mapping = mappingsOf(handlerFunction(dev.stacks, GUARDRAIL_JUDGE.entry).function)[0];

    expect(referencedResources(mapping?.EventSourceArn)).toEqual([queueId()]);
    expect(mapping).toMatchObject({
      BatchSize: GUARDRAIL_JUDGE.trigger.batchSize,
      MaximumBatchingWindowInSeconds: GUARDRAIL_JUDGE.trigger.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(GUARDRAIL_JUDGE.trigger.maxBatchingWindowSeconds).toBeGreaterThan(0);
  });

  it('lets the judge receive, delete and hide checks of its queue only, send nothing, and read runs without writing them', () => {
    const sqsStatements = statementsOfRole(dev.resources, judgeRole()).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('sqs:')),
    );

    expect(sqsStatements.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']),
    );
    expect(sqsStatements.flatMap(actionsOf)).not.toContain('sqs:SendMessage');
    for (const statement of sqsStatements)
      expect(referencedResources(statement.Resource)).toEqual([queueId()]);
    // It reads runs (an approval's touched slots) and never writes one.
    const runsTable = tableLogicalId(dev, 'Runs');
    const onRuns = statementsOfRole(dev.resources, judgeRole()).filter((statement) =>
      referencedLogicalIds(statement.Resource).has(runsTable),
    );
    expect(onRuns.flatMap(actionsOf)).toContain('dynamodb:GetItem');
    for (const action of onRuns.flatMap(actionsOf))
      expect(action).not.toMatch(/^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/);
  });

  it('lets record-executions send checks, and nothing else about rollouts', () => {
    const fn = dev.stacks.service.routeFunctions.get('record-executions');
    if (!fn) throw new Error('no record-executions function');
    const sends = statementsOfRole(dev.resources, logicalIdOf(fn.role)).filter((statement) =>
      actionsOf(statement).includes('sqs:SendMessage'),
    );

    expect(sends.flatMap((statement) => referencedResources(statement.Resource))).toEqual([queueId()]);
    expect(referencedResources(environmentOf(dev, fn).GUARDRAIL_QUEUE_URL)).toEqual([queueId()]);
  });
});

describe('event delivery', () => {
  const failureQueueId = () => {
    const [source] = EVENT_DELIVERER.trigger.streams;
    if (!source) throw new Error('The event deliverer reads a stream.');
    return logicalIdOf(queueOf(dev, source.onFailure).queue);
  };

  it('streams new images of the events table into the event deliverer, with partial failures, bisect and a DLQ', () => {
    const events = propertiesOf(dev, tableLogicalId(dev, 'Events'));
    expect(events.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    const mapping = mappingsOf(handlerFunction(dev.stacks, EVENT_DELIVERER.entry).function)[0];
    expect(referencedResources(mapping?.EventSourceArn)).toEqual([tableLogicalId(dev, 'Events')]);
    expect(JSON.stringify(mapping?.EventSourceArn)).toContain('StreamArn');
    expect(referencedResources(mapping?.DestinationConfig)).toEqual([failureQueueId()]);
    expect(mapping).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      StartingPosition: 'TRIM_HORIZON',
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
    });
  });

  it('streams new and old images of the runs and settings tables into the relay, only writes that carry an event', () => {
    const mappings = mappingsOf(handlerFunction(dev.stacks, EVENT_RELAY.entry).function);
    expect(mappings).toHaveLength(2);
    for (const [table, eventNames] of [
      ['Runs', ['MODIFY']],
      ['Settings', ['INSERT', 'MODIFY']],
    ] as const) {
      expect(propertiesOf(dev, tableLogicalId(dev, table)).StreamSpecification).toEqual({
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      });
      const mapping = mappings.find((candidate) =>
        referencedLogicalIds(candidate.EventSourceArn).has(tableLogicalId(dev, table)),
      );
      expect(referencedResources(mapping?.DestinationConfig), table).toEqual([failureQueueId()]);
      expect(mapping, table).toMatchObject({
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BisectBatchOnFunctionError: true,
        StartingPosition: 'TRIM_HORIZON',
        FilterCriteria: {
          Filters: [
            {
              Pattern: JSON.stringify({
                eventName: eventNames,
                dynamodb: { NewImage: { outboxEvent: { S: [{ exists: true }] } } },
              }),
            },
          ],
        },
      });
    }
    // The relay may write events but read nothing, and touches no other table than its stream's.
    const actions = statementsOf(dev, handlerFunction(dev.stacks, EVENT_RELAY.entry)).flatMap(actionsOf);
    expect(actions).toContain('dynamodb:PutItem');
    expect(actions).not.toContain('dynamodb:GetItem');
    expect(actions).not.toContain('dynamodb:Query');
  });

  it('lets only the event deliverer put events on the bus, and adds a bus policy only for the consumer accounts', () => {
    const busId = logicalIdOf(dev.stacks.stateful.stateful.eventBus);
    const putters = rolesWithStatement(
      dev,
      (statement) =>
        actionsOf(statement).includes('events:PutEvents') &&
        referencedLogicalIds(statement.Resource).has(busId),
    );
    expect(putters).toEqual([logicalIdOf(handlerFunction(dev.stacks, EVENT_DELIVERER.entry).role)]);
    expect(resourcesOfType(dev, 'AWS::Events::EventBusPolicy')).toHaveLength(0);

    const shared = synthesize({ stage: 'dev', eventBusConsumerAccounts: ['111111111111'] });
    const policies = JSON.stringify(resourcesOfType(shared, 'AWS::Events::EventBusPolicy'));
    expect(policies).toContain('111111111111');
    expect(policies).toContain('events:creatorAccount');
    expect(() => synthesize({ stage: 'dev', eventBusConsumerAccounts: ['everyone'] })).toThrow(/12-digit/);
  });
});

describe('the split from the single stack', () => {
  /**
   * The stateful resources of the single stack this app was split from, by logical id: the
   * stateful stack keeps that stack's id and these construct paths, so a deployment made before
   * the split updates in place and none of them is replaced. (The email subscription's id follows
   * the address, the bus policy's exists only with consumer accounts.)
   */
  const KEPT: Readonly<Record<string, readonly string[]>> = {
    'AWS::DynamoDB::Table': [
      'StatefulRunsTableFE00F3D2',
      'StatefulDataTable3C1A7EC3',
      'StatefulAuthTable260DC2F6',
      'StatefulEventsTable6756B691',
      'StatefulSettingsTable01783B50',
    ],
    'AWS::SQS::Queue': [
      'StatefulSynthesisQueue23656B15',
      'StatefulSynthesisDeadLetterQueueAC735F2D',
      'StatefulLifecycleQueueC27EB915',
      'StatefulLifecycleDeadLetterQueue8DAC922B',
      'StatefulWebhookQueueEFDD22D0',
      'StatefulWebhookDeadLetterQueueA21DB46F',
      'StatefulGuardrailQueueD9C150B5',
      'StatefulGuardrailDeadLetterQueue90D660C9',
      // The slow lane of webhook deliveries (issue 47): new, so any id is its first.
      'StatefulWebhookSlowQueue5678A7D9',
      'StatefulWebhookSlowDeadLetterQueueC38C5BB9',
      'EventDeliveryEventDeliveryDeadLetterQueue2A9051F3',
    ],
    'AWS::SQS::QueuePolicy': [
      'StatefulSynthesisQueuePolicy6BD11D69',
      'StatefulSynthesisDeadLetterQueuePolicy1F7BFC03',
      'StatefulLifecycleQueuePolicy593DB1CE',
      'StatefulLifecycleDeadLetterQueuePolicyFDDE9DA4',
      'StatefulWebhookQueuePolicyE84C4C05',
      'StatefulWebhookDeadLetterQueuePolicy16DB2F2B',
      'StatefulGuardrailQueuePolicy95515EA6',
      'StatefulGuardrailDeadLetterQueuePolicy5EC85DD8',
      'StatefulWebhookSlowQueuePolicyF1C67BBE',
      'StatefulWebhookSlowDeadLetterQueuePolicy97D827B6',
      'EventDeliveryEventDeliveryDeadLetterQueuePolicy6289137B',
    ],
    'AWS::SecretsManager::Secret': [
      'StatefulAnthropicApiKey2D65493C',
      'StatefulSessionSigningKeyB810FDF1',
      'StatefulWebhookSecretKey0A9A7951',
    ],
    'AWS::Events::EventBus': ['StatefulEventBusDE10CF8D'],
    'AWS::KMS::Key': ['OperationsAlarmTopicKey52078457'],
    'AWS::SNS::Topic': ['OperationsAlarmTopic909EF7A3'],
    'AWS::SNS::TopicPolicy': ['OperationsAlarmTopicPolicy8B2C617C'],
  };

  it('names the stateful stack with the id it is given, and the service stack after it', () => {
    expect(prod.stacks.stateful.stackName).toBe('Test-prod');
    expect(prod.stacks.service.stackName).toBe('Test-prod-Service');
    expect(prod.stacks.service.dependencies).toContain(prod.stacks.stateful);
  });

  it('keeps every stateful resource of the single-stack deployment at its logical id, in the stateful stack, retained in prod', () => {
    const stateful = Template.fromStack(prod.stacks.stateful).toJSON().Resources as Record<
      string,
      CfnResource
    >;
    for (const [type, ids] of Object.entries(KEPT)) {
      const inStateful = Object.entries(stateful)
        .filter(([, resource]) => resource.Type === type)
        .map(([id]) => id);

      expect(inStateful.sort(), type).toEqual([...ids].sort());
      // …and nowhere else: the service stack holds no data.
      expect(resourcesOfType(prod, type).length, type).toBe(ids.length);
      for (const id of ids) {
        if (!type.endsWith('Policy') && !type.startsWith('AWS::SNS') && !type.startsWith('AWS::Events'))
          expect(stateful[id]?.DeletionPolicy, id).toBe('Retain');
      }
    }
  });
});

describe('CloudFormation limits', () => {
  /** 60 % of CloudFormation's 500 resources a template. */
  const LIMIT = 300;
  const MORE_OPERATIONS = 20;

  const countsOf = (stacks: PipelineSynthesisStacks) =>
    new Map(
      templatesOf(stacks).map(({ stack, template }) => [
        stack.node.path,
        Object.keys(template.toJSON().Resources).length,
      ]),
    );

  /** Path prefixes of `path` that no other operation's path has: the API resources only it needs. */
  const ownResources = (path: string) =>
    path
      .split('/')
      .slice(1)
      .map((_, index, parts) => `/${parts.slice(0, index + 1).join('/')}`)
      .filter(
        (prefix) =>
          OPERATIONS.filter((operation) => `${operation.path}/`.startsWith(`${prefix}/`)).length === 1,
      ).length;

  it('keeps every template at most 300 resources, with room for 20 more operations each in a module of its own', () => {
    const counts = countsOf(prod.stacks);
    // What one more operation costs each template, measured: the app without one existing operation
    // (its module's only one) of each route group, the one needing the most API resources of its own.
    const alone = OPERATION_FUNCTIONS.filter((definition) => definition.operations.length === 1);
    const removed = [true, false].map((underPipelines) => {
      const candidates = alone
        .flatMap(({ operations }) => operations)
        .filter((operation) => operation.path.startsWith('/pipelines') === underPipelines);
      return candidates.sort((a, b) => ownResources(b.path) - ownResources(a.path))[0];
    });
    const costs = removed.map((operation) => {
      if (!operation) throw new Error('no operation to measure');
      const without = buildStacks(testApp(), 'Test-prod', {
        stage: 'prod',
        defaultSynthesisHandler: 'claude-v1',
        email: ACME_EMAIL,
        alarmEmail: 'ops@acme.example',
        operations: OPERATIONS.filter((candidate) => candidate !== operation),
      });
      const fewer = countsOf(without);
      return new Map([...counts].map(([path, count]) => [path, count - (fewer.get(path) ?? 0)]));
    });

    for (const [path, count] of counts) {
      const perOperation = Math.max(...costs.map((cost) => cost.get(path) ?? 0));
      expect(count, path).toBeLessThanOrEqual(LIMIT);
      expect(
        count + MORE_OPERATIONS * perOperation,
        `${path}: ${count} + ${MORE_OPERATIONS} × ${perOperation}`,
      ).toBeLessThanOrEqual(LIMIT);
    }
    // The measure is real: each removed operation took a function (4 resources) and its invoke
    // permission from its group's nested stack, and a method and its own API resources from the API's.
    for (const [index, operation] of removed.entries()) {
      const group = operation?.path.startsWith('/pipelines') ? 'PipelineRoutes' : 'Routes';
      const expected = new Map([...counts.keys()].map((path) => [path, 0]));
      expected.set('Test-prod-Service', 1 + ownResources(operation?.path ?? ''));
      expected.set(`Test-prod-Service/${group}`, 5);
      expect(costs[index], operation?.name).toEqual(expected);
    }
  }, 120_000);
});

describe('the local stack and the CDK stack, from the same lists', () => {
  let local: LocalQueues;
  beforeAll(async () => {
    local = await startLocalQueues({ region: 'us-east-1', accountId: '000000000000' });
  });
  afterAll(() => local?.sqs.stop());

  /** The CDK queue that stands where a local queue stands: the same row's queue or dead-letter queue. */
  function cdkQueueOf(queue: LocalQueue): IConstruct {
    for (const [name, deployed] of local.byName) {
      const cdk = queueOf(dev, name);
      if (deployed.queue === queue) return cdk.queue;
      if (deployed.deadLetterQueue === queue && cdk.deadLetterQueue) return cdk.deadLetterQueue;
    }
    throw new Error(`local queue ${queue.name} stands for no deployed queue`);
  }

  it('has every declared queue and dead-letter queue, with the same visibility timeout, retention and receive count', () => {
    const localQueues = [...local.byName.values()].flatMap((deployed) =>
      deployed.deadLetterQueue ? [deployed.queue, deployed.deadLetterQueue] : [deployed.queue],
    );

    expect([...local.byName.keys()].sort()).toEqual(QUEUES.map((queue) => queue.name).sort());
    expect(localQueues.map((queue) => logicalIdOf(cdkQueueOf(queue))).sort()).toEqual(
      resourcesOfType(dev, 'AWS::SQS::Queue')
        .map(([id]) => id)
        .sort(),
    );
    for (const queue of localQueues) {
      const cdk = propertiesOf(dev, logicalIdOf(cdkQueueOf(queue)));
      const redrive = cdk.RedrivePolicy as
        | { maxReceiveCount: number; deadLetterTargetArn: unknown }
        | undefined;
      // SQS's defaults where the template sets nothing: 30 s visible again, four days kept.
      expect(queue.visibilityTimeoutMs, queue.name).toBe(Number(cdk.VisibilityTimeout ?? 30) * 1000);
      expect(queue.retentionMs, queue.name).toBe(Number(cdk.MessageRetentionPeriod ?? 4 * 24 * 3600) * 1000);
      expect(queue.maxReceiveCount, queue.name).toBe(redrive?.maxReceiveCount ?? Number.POSITIVE_INFINITY);
      expect(
        queue.deadLetterQueue ? logicalIdOf(cdkQueueOf(queue.deadLetterQueue)) : undefined,
        queue.name,
      ).toBe(redrive ? [...referencedLogicalIds(redrive.deadLetterTargetArn)][0] : undefined);
    }
  });

  it('triggers every handler as the CDK stack does: the same queues and batches, the same schedules, the same stream sources', () => {
    const triggers = localTriggers(local.byName);
    const mappings = resourcesOfType(dev, 'AWS::Lambda::EventSourceMapping');
    const rules = resourcesOfType(dev, 'AWS::Events::Rule').map(([, rule]) => rule.Properties ?? {});
    let streamSources = 0;

    for (const trigger of triggers) {
      const fn = handlerFunction(dev.stacks, trigger.entry).function;
      if (trigger.kind === 'queue') {
        const [mapping] = mappingsOf(fn);
        expect(referencedResources(mapping?.EventSourceArn), trigger.entry).toEqual([
          logicalIdOf(cdkQueueOf(trigger.queue)),
        ]);
        expect(mapping?.BatchSize, trigger.entry).toBe(trigger.settings.batchSize);
        expect((mapping?.ScalingConfig as { MaximumConcurrency?: number })?.MaximumConcurrency).toBe(
          trigger.settings.maxConcurrency,
        );
        expect(mapping?.MaximumBatchingWindowInSeconds).toBe(trigger.settings.maxBatchingWindowSeconds);
      } else if (trigger.kind === 'schedule') {
        const rule = rules.find((candidate) =>
          (candidate.Targets as Array<{ Arn: unknown }>).some((target) =>
            referencedLogicalIds(target.Arn).has(logicalIdOf(fn)),
          ),
        );
        const minutes = trigger.everyMs / 60_000;
        expect(rule?.ScheduleExpression, trigger.entry).toMatch(
          minutes % 60 === 0 ? `rate(${minutes / 60} hour` : `rate(${minutes} minute`,
        );
      } else {
        streamSources += trigger.sources.length;
        for (const source of trigger.sources) {
          const mapping = mappingsOf(fn).find((candidate) =>
            referencedLogicalIds(candidate.EventSourceArn).has(tableLogicalId(dev, source.table)),
          );
          expect(mapping?.BatchSize, `${trigger.entry} ${source.table}`).toBe(source.batchSize);
          expect(
            JSON.parse(
              (mapping?.FilterCriteria as { Filters: [{ Pattern: string }] } | undefined)?.Filters[0]
                .Pattern ?? '{}',
            ),
          ).toMatchObject({
            eventName: [...source.eventNames],
          });
          expect(referencedResources(mapping?.DestinationConfig)).toEqual([
            logicalIdOf(queueOf(dev, source.onFailure).queue),
          ]);
        }
      }
    }
    const queueTriggers = triggers.filter((trigger) => trigger.kind === 'queue').length;
    expect(queueTriggers + streamSources).toBe(mappings.length);
    expect(triggers.filter((trigger) => trigger.kind === 'schedule')).toHaveLength(rules.length);
    // Every handler but the authorizer (API Gateway's) and those run on deploy has its trigger locally.
    expect(triggers.map((trigger) => trigger.entry).sort()).toEqual(
      HANDLERS.filter((handler) => !('authorizer' in handler.trigger) && !runsOnDeploy(handler))
        .map((handler) => handler.entry)
        .sort(),
    );
  });
});
