import { existsSync } from 'node:fs';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { CSRF_REFUSAL_CONTEXT_KEY } from '../../lambdas/auth/csrf.ts';
import { PASSWORD_HASHING_MEMORY_MB } from '../../lambdas/auth/password.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  EVENT_DELIVERER,
  EVENT_RELAY,
  type FunctionAccess,
  GUARDRAIL_JUDGE,
  MAX_RECEIVE_COUNT,
  PIPELINE_DELETER,
  RETENTION_JOB,
  RUN_SWEEPER,
  SYNTHESIS_WORKER,
  WEBHOOK_DELIVERER,
  WORKER_TIMEOUT_SECONDS,
} from '../../lambdas/functions.ts';
import { DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { METRIC, METRICS_NAMESPACE } from '../../lambdas/observability/metrics.ts';
import { defineOperation, moduleOf } from '../../lambdas/operations/declaration.ts';
import { operationFunctions } from '../../lambdas/operations/functions.ts';
import { getSynthesisRun } from '../../lambdas/operations/get-synthesis-run.ts';
import { OPERATIONS } from '../../lambdas/operations/index.ts';
import { TABLE_DEFINITIONS, type TableDefinition } from '../../lambdas/store/table-definitions.ts';
import { buildScriptCommand, handlerEntryPath, operationEntryPath, REPO_ROOT } from '../../lib/bundling.ts';
import { emailSettings, PLACEHOLDER_EMAIL_FROM } from '../../lib/email.ts';
import { ALARM_THRESHOLDS } from '../../lib/operations.ts';
import type { PipelineSynthesisStack } from '../../lib/pipeline-synthesis-stack.ts';
import { SERVICE_NAME, type ServiceFunction } from '../../lib/service-function.ts';
import { localFunctions, localRoutes } from '../../local/functions.ts';
import {
  actionsOf,
  type BuildOptions,
  buildStack,
  type CfnResource,
  logicalIdOf,
  methodKey,
  methodPath,
  type PolicyStatement,
  policyStatements,
  referencedLogicalIds,
  resourcePaths,
  resourcesOf,
  statementsOfRole,
  testApp,
} from './helpers.ts';

interface Synthesized {
  stack: PipelineSynthesisStack;
  template: Template;
  resources: Record<string, CfnResource>;
}

interface FunctionUnderTest {
  name: string;
  fn: ServiceFunction;
  access: FunctionAccess;
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
  const stack = buildStack(testApp(), `Test-${options.stage}`, options);
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources };
}

function resourcesOfType(synthesized: Synthesized, type: string): [string, CfnResource][] {
  return Object.entries(synthesized.resources).filter(([, resource]) => resource.Type === type);
}

function propertiesOf(synthesized: Synthesized, logicalId: string): Record<string, unknown> {
  const properties = synthesized.resources[logicalId]?.Properties;
  if (!properties) throw new Error(`No resource ${logicalId}`);
  return properties;
}

/** The operations' functions, one per module: operations that share a module share one function. */
const OPERATION_FUNCTIONS = operationFunctions(OPERATIONS);

/** The event source mappings that invoke `fn`. */
function mappingsOf(fn: IFunction): Record<string, unknown>[] {
  return resourcesOfType(dev, 'AWS::Lambda::EventSourceMapping')
    .map(([, resource]) => resource.Properties ?? {})
    .filter((properties) => (properties.FunctionName as { Ref: string }).Ref === logicalIdOf(fn));
}

function functionsOf(stack: PipelineSynthesisStack): FunctionUnderTest[] {
  const apiFunctions = OPERATION_FUNCTIONS.map((definition) => {
    const fn = stack.api.operationFunctions.get(definition.module);
    if (!fn) throw new Error(`No function for ${definition.module}`);
    return {
      name: definition.module,
      fn,
      access: definition.access,
      extraEnv: definition.access.sendJobs
        ? ['DEFAULT_SYNTHESIS_HANDLER', 'SYNTHESIS_RUNS_PER_TEAM_PER_HOUR']
        : [],
      memorySize: definition.memoryMb,
    };
  });
  return [
    ...apiFunctions,
    {
      name: AUTHORIZER.entry,
      fn: stack.api.authorizerFunction,
      access: AUTHORIZER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: SYNTHESIS_WORKER.entry,
      fn: stack.jobs.worker,
      access: SYNTHESIS_WORKER.access,
      extraEnv: ['ANTHROPIC_SECRET_ARN'],
      memorySize: 512,
    },
    {
      name: DEAD_LETTER_HANDLER.entry,
      fn: stack.jobs.deadLetterHandler,
      access: DEAD_LETTER_HANDLER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: RUN_SWEEPER.entry,
      fn: stack.jobs.sweeper,
      access: RUN_SWEEPER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: PIPELINE_DELETER.entry,
      fn: stack.lifecycle.deleter,
      access: PIPELINE_DELETER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: EVENT_DELIVERER.entry,
      fn: stack.eventDelivery.eventDeliverer,
      access: EVENT_DELIVERER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: EVENT_RELAY.entry,
      fn: stack.eventDelivery.eventRelay,
      access: EVENT_RELAY.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: RETENTION_JOB.entry,
      fn: stack.lifecycle.retentionJob,
      access: RETENTION_JOB.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: WEBHOOK_DELIVERER.entry,
      fn: stack.eventDelivery.webhookDeliverer,
      access: WEBHOOK_DELIVERER.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
    {
      name: GUARDRAIL_JUDGE.entry,
      fn: stack.guardrails.judge,
      access: GUARDRAIL_JUDGE.access,
      extraEnv: [],
      memorySize: DEFAULT_MEMORY_MB,
    },
  ];
}

function tableLogicalId(synthesized: Synthesized, id: TableDefinition['id']): string {
  return logicalIdOf(synthesized.stack.stateful.table(id));
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
    .flatMap(([, policy]) => [...referencedLogicalIds(policy.Properties?.Roles)])
    .sort();
}

/** The logical ids a value refers to, without pseudo parameters such as AWS::Region. */
function referencedResources(value: unknown): string[] {
  return [...referencedLogicalIds(value)].filter((id) => !id.startsWith('AWS::')).sort();
}

let dev: Synthesized;
let prod: Synthesized;

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

  it('turns on termination protection for the prod stack only', () => {
    expect(prod.stack.terminationProtection).toBe(true);
    expect(dev.stack.terminationProtection).toBe(false);
  });
});

describe('queues and secrets', () => {
  it('gives the synthesis queue six worker timeouts of visibility and a redrive to the DLQ', () => {
    const queue = propertiesOf(dev, logicalIdOf(dev.stack.stateful.synthesisQueue));
    const redrive = queue.RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown };

    expect(queue.VisibilityTimeout).toBe(6 * WORKER_TIMEOUT_SECONDS);
    expect(queue.VisibilityTimeout).toBe(720);
    expect(redrive.maxReceiveCount).toBe(MAX_RECEIVE_COUNT);
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(3);
    expect(redrive.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': [logicalIdOf(dev.stack.stateful.deadLetterQueue), 'Arn'],
    });
    expect(queue.SqsManagedSseEnabled).toBe(true);
  });

  it('keeps dead letters for 14 days, encrypted', () => {
    const dlq = propertiesOf(dev, logicalIdOf(dev.stack.stateful.deadLetterQueue));

    expect(dlq.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(dlq.SqsManagedSseEnabled).toBe(true);
  });

  it('denies every request to either queue that does not use TLS', () => {
    const queues = [dev.stack.stateful.synthesisQueue, dev.stack.stateful.deadLetterQueue].map(logicalIdOf);
    for (const queueId of queues) {
      const policy = resourcesOfType(dev, 'AWS::SQS::QueuePolicy').find(([, resource]) =>
        referencedLogicalIds(resource.Properties?.Queues).has(queueId),
      );
      const statements = policyStatements(policy?.[1]);

      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('retains the queues and secrets in prod', () => {
    const stateful = prod.stack.stateful;
    for (const construct of [
      stateful.synthesisQueue,
      stateful.deadLetterQueue,
      stateful.anthropicApiKey,
      stateful.sessionSigningKey,
    ]) {
      expect(prod.resources[logicalIdOf(construct)]?.DeletionPolicy).toBe('Retain');
    }
  });

  it('generates the session signing key and stores only a placeholder for the Anthropic key', () => {
    const signingKey = propertiesOf(dev, logicalIdOf(dev.stack.stateful.sessionSigningKey));
    const anthropicKey = propertiesOf(dev, logicalIdOf(dev.stack.stateful.anthropicApiKey));

    expect(signingKey.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true });
    expect(String(anthropicKey.SecretString)).toMatch(/^REPLACE_ME/);
  });
});

describe('functions', () => {
  it('creates one function per operation module plus the authorizer, the worker, the dead-letter handler and the sweeper', () => {
    const modules = new Set(OPERATIONS.map(moduleOf));

    expect(OPERATION_FUNCTIONS.map(({ module }) => module).sort()).toEqual([...modules].sort());
    expect([...dev.stack.api.operationFunctions.keys()].sort()).toEqual([...modules].sort());
    expect(resourcesOfType(dev, 'AWS::Lambda::Function')).toHaveLength(modules.size + 10);
  });

  it('runs every function on nodejs24.x, arm64, traced, logging to its own one-month log group', () => {
    for (const { fn } of functionsOf(dev.stack)) {
      const properties = propertiesOf(dev, logicalIdOf(fn.function));
      const logGroupId = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      expect(properties.Runtime).toBe('nodejs24.x');
      expect(properties.Architectures).toEqual(['arm64']);
      expect(properties.Handler).toBe('index.handler');
      expect(properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(propertiesOf(dev, logGroupId).RetentionInDays).toBe(30);
    }
  });

  it('gives each function exactly the environment its access implies', () => {
    for (const { name, fn, access, extraEnv } of functionsOf(dev.stack)) {
      const expected = [
        'POWERTOOLS_SERVICE_NAME',
        'LOG_LEVEL',
        ...TABLE_DEFINITIONS.filter((definition) => access[ACCESS_KEY[definition.id]]).map((d) => d.envVar),
        ...(access.sendJobs || access.consumesJobs ? ['SYNTHESIS_QUEUE_URL'] : []),
        ...(access.sendsLifecycleJobs || access.consumesLifecycleJobs ? ['LIFECYCLE_QUEUE_URL'] : []),
        ...(access.sendsGuardrailChecks || access.consumesGuardrailChecks ? ['GUARDRAIL_QUEUE_URL'] : []),
        ...(access.sessionSecret ? ['SESSION_SECRET_ARN'] : []),
        ...(access.sendsEmail ? ['EMAIL_FROM', 'APP_URL'] : []),
        ...(access.webhookSecretKey ? ['WEBHOOK_SECRET_KEY_ARN'] : []),
        ...(access.fansOutEvents || access.deliversWebhooks ? ['WEBHOOK_QUEUE_URL'] : []),
        ...(access.fansOutEvents ? ['EVENT_BUS_NAME'] : []),
        ...extraEnv,
      ];

      expect(Object.keys(environmentOf(dev, fn)).sort(), name).toEqual(expected.sort());
    }
  });

  it('matches the local stack: every function gets the same variables there, with local stand-ins', () => {
    const local = localFunctions(
      {
        tableNames: { Runs: 'r', Data: 'd', Auth: 'a', Events: 'e', Settings: 's' },
        synthesisQueueUrl: 'http://127.0.0.1:1/000000000000/q',
        lifecycleQueueUrl: 'http://127.0.0.1:1/000000000000/lifecycle',
        guardrailQueueUrl: 'http://127.0.0.1:1/000000000000/guardrail-checks',
        sessionSecret: { SESSION_SECRET: 'k' },
        email: { EMAIL_FROM: 'f', APP_URL: 'http://127.0.0.1:1', EMAIL_OUTBOX_DIR: '/tmp/outbox' },
        model: { ANTHROPIC_API_KEY: 'k' },
        defaultSynthesisHandler: 'heuristic-v1',
        synthesisRunsPerTeamPerHour: 500,
        webhooks: {
          queueUrl: 'http://127.0.0.1:3/000000000000/w',
          secretKey: { WEBHOOK_SECRET_KEY: 'k' },
          allowLocalUrls: true,
        },
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
    const functions = functionsOf(dev.stack);
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
    for (const { name, fn, access } of functionsOf(dev.stack)) {
      const environment = environmentOf(dev, fn);
      for (const definition of TABLE_DEFINITIONS) {
        if (!access[ACCESS_KEY[definition.id]]) continue;
        expect(environment[definition.envVar], name).toEqual({ Ref: tableLogicalId(dev, definition.id) });
      }
      if (access.sendJobs || access.consumesJobs) {
        expect(environment.SYNTHESIS_QUEUE_URL).toEqual({
          Ref: logicalIdOf(dev.stack.stateful.synthesisQueue),
        });
      }
    }
  });

  it('passes the default synthesis handler to the synthesize function', () => {
    const synthesize = OPERATIONS.find(
      (operation) => operation.path === '/pipelines/{pipelineId}/synthesize',
    );
    if (!synthesize) throw new Error('no synthesize operation');
    const devFunction = dev.stack.api.operationFunctions.get(moduleOf(synthesize));
    const prodFunction = prod.stack.api.operationFunctions.get(moduleOf(synthesize));
    if (!devFunction || !prodFunction) throw new Error('no synthesize function');

    expect(environmentOf(dev, devFunction).DEFAULT_SYNTHESIS_HANDLER).toBe('heuristic-v1');
    expect(environmentOf(prod, prodFunction).DEFAULT_SYNTHESIS_HANDLER).toBe('claude-v1');
  });

  it('gives the authorizer the session signing key ARN and the worker the Anthropic key ARN', () => {
    expect(environmentOf(dev, dev.stack.api.authorizerFunction).SESSION_SECRET_ARN).toEqual({
      Ref: logicalIdOf(dev.stack.stateful.sessionSigningKey),
    });
    expect(environmentOf(dev, dev.stack.jobs.worker).ANTHROPIC_SECRET_ARN).toEqual({
      Ref: logicalIdOf(dev.stack.stateful.anthropicApiKey),
    });
  });

  it('runs the worker for the worker timeout with 512 MB', () => {
    const worker = propertiesOf(dev, logicalIdOf(dev.stack.jobs.worker.function));

    expect(worker.Timeout).toBe(WORKER_TIMEOUT_SECONDS);
    expect(worker.MemorySize).toBe(512);
  });

  it('feeds the worker from the queue and the dead-letter handler from the DLQ, with partial batch failures', () => {
    const mappings = resourcesOfType(dev, 'AWS::Lambda::EventSourceMapping').map(
      ([, resource]) => resource.Properties ?? {},
    );
    const workerMapping = mappings.find(
      (mapping) =>
        (mapping.FunctionName as { Ref: string }).Ref === logicalIdOf(dev.stack.jobs.worker.function),
    );
    const deadLetterMapping = mappings.find(
      (mapping) =>
        (mapping.FunctionName as { Ref: string }).Ref ===
        logicalIdOf(dev.stack.jobs.deadLetterHandler.function),
    );

    const deleterMapping = mappings.find(
      (mapping) =>
        (mapping.FunctionName as { Ref: string }).Ref === logicalIdOf(dev.stack.lifecycle.deleter.function),
    );

    // The worker, the dead-letter handler, the deleter, the webhook deliverer, the guardrail judge,
    // and the events, runs and settings streams.
    expect(mappings).toHaveLength(8);
    expect(deleterMapping).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(dev.stack.stateful.lifecycleQueue), 'Arn'] },
    });
    expect(workerMapping).toMatchObject({
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(dev.stack.stateful.synthesisQueue), 'Arn'] },
    });
    expect(deadLetterMapping).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(dev.stack.stateful.deadLetterQueue), 'Arn'] },
    });
  });

  it('resolves handler entries to lambdas/handlers/<entry>.ts and operation modules to lambdas/operations/<module>.ts under the repository root', () => {
    expect(handlerEntryPath('authorize')).toBe(`${REPO_ROOT}/lambdas/handlers/authorize.ts`);
    expect(operationEntryPath('get-synthesis-run')).toBe(
      `${REPO_ROOT}/lambdas/operations/get-synthesis-run.ts`,
    );
    expect(REPO_ROOT.endsWith('/lib')).toBe(false);
    // Every function's entry is a file of the repository.
    for (const { entry } of [AUTHORIZER, SYNTHESIS_WORKER, DEAD_LETTER_HANDLER, RUN_SWEEPER]) {
      expect(existsSync(handlerEntryPath(entry)), entry).toBe(true);
    }
    for (const { module } of OPERATION_FUNCTIONS) {
      expect(existsSync(operationEntryPath(module)), module).toBe(true);
    }
  });
});

describe('least privilege', () => {
  it('lets each function touch only the tables it names, writing only where it may', () => {
    for (const { name, fn, access } of functionsOf(dev.stack)) {
      const statements = dynamoStatements(statementsOf(dev, fn));
      const referenced = new Set(
        statements.flatMap((statement) => [...referencedLogicalIds(statement.Resource)]),
      );
      const written = tablesWrittenBy(statements);
      // A stream event source reads its table's stream (a read grant on the stream, never a write).
      const streamed: string[] = [EVENT_DELIVERER, EVENT_RELAY]
        .filter((definition) => definition.entry === name)
        .flatMap((definition) => definition.streamSources.map((source) => source.table));
      const expectedTables = TABLE_DEFINITIONS.filter(
        (d) => access[ACCESS_KEY[d.id]] || streamed.includes(d.id),
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
    const fn = dev.stack.api.operationFunctions.get('get-synthesis-run');
    if (!fn) throw new Error('no get-synthesis-run function');
    const actions = statementsOf(dev, fn).flatMap(actionsOf);

    expect(actions).toContain('dynamodb:GetItem');
    expect(actions).toContain('dynamodb:Query');
    expect(actions).not.toContain('dynamodb:PutItem');
    expect(actions).not.toContain('dynamodb:UpdateItem');
    expect(actions).not.toContain('sqs:SendMessage');
  });

  it('lets the authorizer read the auth table and the session signing key, and write only token use', () => {
    const authorizer = dev.stack.api.authorizerFunction;
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
      [...ownLogGroup, tableLogicalId(dev, 'Auth'), logicalIdOf(dev.stack.stateful.sessionSigningKey)].sort(),
    );
  });

  it('lets only the functions that queue jobs send to each queue', () => {
    const queues = [
      { queue: dev.stack.stateful.synthesisQueue, sends: (access: FunctionAccess) => access.sendJobs },
      { queue: dev.stack.stateful.webhookQueue, sends: (access: FunctionAccess) => access.fansOutEvents },
      {
        queue: dev.stack.stateful.lifecycleQueue,
        // The deleter re-queues its own next step.
        sends: (access: FunctionAccess) => access.sendsLifecycleJobs || access.consumesLifecycleJobs,
      },
      {
        queue: dev.stack.stateful.guardrailQueue,
        sends: (access: FunctionAccess) => access.sendsGuardrailChecks,
      },
    ];
    for (const { queue, sends } of queues) {
      const queueArn = JSON.stringify({ 'Fn::GetAtt': [logicalIdOf(queue), 'Arn'] });
      const senders = resourcesOfType(dev, 'AWS::IAM::Policy')
        .filter(([, policy]) => {
          const document = JSON.stringify(policy.Properties?.PolicyDocument);
          return document.includes('sqs:SendMessage') && document.includes(queueArn);
        })
        .flatMap(([, policy]) => [...referencedLogicalIds(policy.Properties?.Roles)]);
      const expected = functionsOf(dev.stack)
        .filter(({ access }) => sends(access))
        .map(({ fn }) => logicalIdOf(fn.role));

      expect(expected.length).toBeGreaterThan(0);
      expect(senders.sort()).toEqual(expected.sort());
    }
  });

  it('lets only the worker read the Anthropic key', () => {
    const secretId = logicalIdOf(dev.stack.stateful.anthropicApiKey);
    const readers = resourcesOfType(dev, 'AWS::IAM::Policy')
      .filter(([, policy]) => referencedLogicalIds(policy.Properties?.PolicyDocument).has(secretId))
      .flatMap(([, policy]) => [...referencedLogicalIds(policy.Properties?.Roles)]);

    expect(readers).toEqual([logicalIdOf(dev.stack.jobs.worker.role)]);
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
    expect(xray.length).toBe(functionsOf(dev.stack).length);
    for (const statement of xray) {
      expect(actionsOf(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
    // …and the two stream-fed functions' ListStreams, which has none either.
    expect(wildcard.length - xray.length).toBe(2);
  });

  it('uses no AWS-managed policy on any function role', () => {
    for (const { fn } of functionsOf(dev.stack)) {
      expect(propertiesOf(dev, logicalIdOf(fn.role)).ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('authentication', () => {
  function byName(synthesized: Synthesized, name: string): FunctionUnderTest {
    const found = functionsOf(synthesized.stack).find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no function ${name}`);
    return found;
  }

  it('lets exactly the functions that declare sessionSecret (the authorizer among them) read the signing key', () => {
    const secretId = logicalIdOf(dev.stack.stateful.sessionSigningKey);
    const declaring = functionsOf(dev.stack).filter(({ access }) => access.sessionSecret);
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
    for (const { name, fn, access } of functionsOf(dev.stack)) {
      const environment = environmentOf(dev, fn);

      expect(environment.SESSION_SECRET_ARN, name).toEqual(
        access.sessionSecret ? { Ref: logicalIdOf(dev.stack.stateful.sessionSigningKey) } : undefined,
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

  it('lets only request-magic-link send email, and only as the sender identity', () => {
    const sesStatements = allStatements(dev).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('ses:')),
    );
    const senders = rolesWithStatement(dev, (statement) =>
      actionsOf(statement).some((action) => action.startsWith('ses:')),
    );

    expect(
      functionsOf(dev.stack)
        .filter(({ access }) => access.sendsEmail)
        .map(({ name }) => name),
    ).toEqual(['request-magic-link']);
    expect(senders).toEqual([logicalIdOf(byName(dev, 'request-magic-link').fn.role)]);
    expect(sesStatements).toEqual([
      {
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
      },
    ]);
  });

  it('sends from the placeholder by default, with magic links opening the review application on the API stage', () => {
    const { fn } = byName(dev, 'request-magic-link');
    const environment = environmentOf(dev, fn);
    const restApiId = logicalIdOf(dev.stack.api.restApi);

    expect(environment.EMAIL_FROM).toBe(PLACEHOLDER_EMAIL_FROM);
    expect(environment.APP_URL).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: restApiId },
          '.execute-api.',
          { Ref: 'AWS::Region' },
          '.',
          { Ref: 'AWS::URLSuffix' },
          '/dev/app',
        ],
      ],
    });
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
    const updates = statementsOf(dev, dev.stack.api.authorizerFunction).filter((statement) =>
      actionsOf(statement).includes('dynamodb:UpdateItem'),
    );

    expect(updates).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: { 'Fn::GetAtt': [authTableId, 'Arn'] },
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APITOKEN#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
    ]);
  });

  it('gives UpdateItem on the auth table only to readWrite functions and the token-use grant', () => {
    const authTableId = tableLogicalId(dev, 'Auth');
    for (const { name, fn, access } of functionsOf(dev.stack)) {
      const updates = statementsOf(dev, fn).filter(
        (statement) =>
          actionsOf(statement).includes('dynamodb:UpdateItem') &&
          referencedLogicalIds(statement.Resource).has(authTableId),
      );
      const unconditioned = updates.filter((statement) => statement.Condition === undefined);
      const conditioned = updates.filter((statement) => statement.Condition !== undefined);

      expect(unconditioned.length > 0, name).toBe(access.auth === 'readWrite');
      expect(conditioned.length, name).toBe(access.recordsTokenUse ? 1 : 0);
    }
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

  it('gives the functions that hash passwords 1024 MB and every other function its default', () => {
    const hashing = OPERATIONS.filter((operation) => operation.memoryMb === PASSWORD_HASHING_MEMORY_MB);

    expect(PASSWORD_HASHING_MEMORY_MB).toBe(1024);
    expect(hashing.map(moduleOf).sort()).toEqual(['change-password', 'log-in']);
    for (const { module, memoryMb } of OPERATION_FUNCTIONS) {
      expect(memoryMb, module).toBe(
        ['change-password', 'log-in'].includes(module) ? 1024 : DEFAULT_MEMORY_MB,
      );
    }
    for (const { name, fn, memorySize } of functionsOf(dev.stack)) {
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
      const fn = dev.stack.api.operationFunctions.get(moduleOf(operation));
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
    const serveApp = dev.stack.api.operationFunctions.get('serve-app');
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
    expect(propertiesOf(dev, logicalIdOf(dev.stack.api.restApi)).MinimumCompressionSize).toBe(1024);
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
      const authorizerId = logicalIdOf(dev.stack.api.node.findChild('RequestAuthorizer'));
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
    const stack = buildStack(testApp(), 'PublicByDeclaration', { stage: 'dev', operations });
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
        logicalIdOf(dev.stack.api.authorizerFunction.function),
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
    const synthesize = dev.stack.api.operationFunctions.get('synthesize-pipeline');
    expect(environmentOf(dev, synthesize as ServiceFunction).SYNTHESIS_RUNS_PER_TEAM_PER_HOUR).toBe(
      String(DEFAULT_LIMITS.synthesisRunsPerTeamPerHour),
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
        referencedLogicalIds(alarm.Dimensions).has(logicalIdOf(dev.stack.stateful.deadLetterQueue)),
    );
    const workerAlarm = alarms.find((alarm) => alarm.MetricName === METRIC.jobErrors);

    expect(dlqAlarm).toMatchObject({
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(referencedLogicalIds(dlqAlarm?.Dimensions)).toEqual(
      new Set([logicalIdOf(dev.stack.stateful.deadLetterQueue)]),
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

  it('has the six alarms of issue 13 and the guardrail and event stream DLQ alarms, each with a reason, notifying the one alarm topic', () => {
    const topicId = logicalIdOf(dev.stack.operations.topic);
    const alarms = resourcesOfType(dev, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties ?? {});
    const metricOf = (alarm: Record<string, unknown>) =>
      (alarm.MetricName as string | undefined) ??
      JSON.stringify((alarm.Metrics as Array<{ Expression?: string }>).find((m) => m.Expression)?.Expression);

    expect(alarms.map(metricOf).sort()).toEqual(
      [
        'ApproximateAgeOfOldestMessage',
        'ApproximateNumberOfMessagesVisible',
        'ApproximateNumberOfMessagesVisible', // the guardrail checks' DLQ
        'ApproximateNumberOfMessagesVisible', // the event streams' DLQ
        'Errors',
        'Latency',
        METRIC.jobErrors,
        JSON.stringify(
          `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
        ),
      ].sort(),
    );
    for (const alarm of alarms) {
      expect(String(alarm.AlarmDescription).length, metricOf(alarm)).toBeGreaterThan(40);
      expect(referencedLogicalIds(alarm.AlarmActions)).toEqual(new Set([topicId]));
      expect(referencedLogicalIds(alarm.OKActions)).toEqual(new Set([topicId]));
    }
    const latency = alarms.find((alarm) => alarm.MetricName === 'Latency');
    expect(latency).toMatchObject({ ExtendedStatistic: 'p99', Threshold: ALARM_THRESHOLDS.apiP99LatencyMs });
    const authorizerAlarm = alarms.find((alarm) => alarm.MetricName === 'Errors');
    expect(referencedLogicalIds(authorizerAlarm?.Dimensions)).toEqual(
      new Set([logicalIdOf(dev.stack.api.authorizerFunction.function)]),
    );
  });

  it('subscribes the alarm email only when the stack is given one, to a topic CloudWatch can publish to', () => {
    const subscriptions = (synthesized: Synthesized) =>
      resourcesOfType(synthesized, 'AWS::SNS::Subscription').map(([, sub]) => sub.Properties ?? {});
    expect(subscriptions(dev)).toEqual([]);
    expect(subscriptions(prod)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@acme.example' }),
    ]);
    const topic = propertiesOf(dev, logicalIdOf(dev.stack.operations.topic));
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
    const sweeperId = logicalIdOf(dev.stack.jobs.sweeper.function);
    const rule = rules.find((candidate) =>
      (candidate.Targets as Array<{ Arn: unknown }>).some((target) =>
        referencedLogicalIds(target.Arn).has(sweeperId),
      ),
    );

    expect(rule).toMatchObject({
      // CDK writes the singular for one minute (the sweeper also judges rollouts, every minute).
      ScheduleExpression:
        RUN_SWEEPER.scheduleMinutes === 1 ? 'rate(1 minute)' : `rate(${RUN_SWEEPER.scheduleMinutes} minutes)`,
      State: 'ENABLED',
    });
  });

  it('outputs the API URL, the table names and the queue URL', () => {
    const outputs = dev.template.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'ApiUrl',
        'RunsTableName',
        'DataTableName',
        'AuthTableName',
        'SynthesisQueueUrl',
      ]),
    );
    expect(outputs.RunsTableName?.Value).toEqual({ Ref: tableLogicalId(dev, 'Runs') });
    expect(outputs.AuthTableName?.Value).toEqual({ Ref: tableLogicalId(dev, 'Auth') });
    expect(outputs.SynthesisQueueUrl?.Value).toEqual({ Ref: logicalIdOf(dev.stack.stateful.synthesisQueue) });
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toContain('execute-api');
  });
});

describe('the per-batch guardrail', () => {
  const judgeRole = () => logicalIdOf(dev.stack.guardrails.judge.role);
  const queueArn = () => ({ 'Fn::GetAtt': [logicalIdOf(dev.stack.stateful.guardrailQueue), 'Arn'] });

  it('queues checks with a redrive to an encrypted, TLS-only DLQ that an alarm watches', () => {
    const queue = propertiesOf(dev, logicalIdOf(dev.stack.stateful.guardrailQueue));
    const dlqId = logicalIdOf(dev.stack.stateful.guardrailDeadLetterQueue);

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
    for (const queueId of [logicalIdOf(dev.stack.stateful.guardrailQueue), dlqId]) {
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
      new Set([logicalIdOf(dev.stack.operations.topic)]),
    );
  });

  it('feeds the judge in coalesced batches: a batching window, a bounded concurrency, partial failures', () => {
    const mapping = mappingsOf(dev.stack.guardrails.judge.function)[0];

    expect(mapping).toMatchObject({
      EventSourceArn: queueArn(),
      BatchSize: GUARDRAIL_JUDGE.eventSource.batchSize,
      MaximumBatchingWindowInSeconds: GUARDRAIL_JUDGE.eventSource.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(GUARDRAIL_JUDGE.eventSource.maxBatchingWindowSeconds).toBeGreaterThan(0);
  });

  it('lets the judge receive, delete and hide checks of its queue only, send nothing, and read runs without writing them', () => {
    const sqsStatements = statementsOfRole(dev.resources, judgeRole()).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('sqs:')),
    );

    expect(sqsStatements.flatMap(actionsOf)).toEqual(
      expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']),
    );
    expect(sqsStatements.flatMap(actionsOf)).not.toContain('sqs:SendMessage');
    for (const statement of sqsStatements) expect(resourcesOf(statement)).toEqual([queueArn()]);
    // It reads runs (an approval's touched slots) and never writes one.
    const runsTable = tableLogicalId(dev, 'Runs');
    const onRuns = statementsOfRole(dev.resources, judgeRole()).filter((statement) =>
      JSON.stringify(resourcesOf(statement)).includes(runsTable),
    );
    expect(onRuns.flatMap(actionsOf)).toContain('dynamodb:GetItem');
    for (const action of onRuns.flatMap(actionsOf))
      expect(action).not.toMatch(/^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/);
  });

  it('lets record-executions send checks, and nothing else about rollouts', () => {
    const fn = dev.stack.api.operationFunctions.get('record-executions');
    if (!fn) throw new Error('no record-executions function');
    const sends = statementsOfRole(dev.resources, logicalIdOf(fn.role)).filter((statement) =>
      actionsOf(statement).includes('sqs:SendMessage'),
    );

    expect(sends.flatMap(resourcesOf)).toEqual([queueArn()]);
    expect(environmentOf(dev, fn)).toHaveProperty('GUARDRAIL_QUEUE_URL', {
      Ref: logicalIdOf(dev.stack.stateful.guardrailQueue),
    });
  });
});

describe('event delivery', () => {
  it('streams new images of the events table into the event deliverer, with partial failures, bisect and a DLQ', () => {
    const events = propertiesOf(dev, tableLogicalId(dev, 'Events'));
    expect(events.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    const mapping = mappingsOf(dev.stack.eventDelivery.eventDeliverer.function)[0];
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [tableLogicalId(dev, 'Events'), 'StreamArn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      StartingPosition: 'TRIM_HORIZON',
      DestinationConfig: {
        OnFailure: {
          Destination: {
            'Fn::GetAtt': [logicalIdOf(dev.stack.eventDelivery.streamDeadLetterQueue), 'Arn'],
          },
        },
      },
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
    });
  });

  it('streams new and old images of the runs and settings tables into the relay, only writes that carry an event', () => {
    const mappings = mappingsOf(dev.stack.eventDelivery.eventRelay.function);
    expect(mappings).toHaveLength(2);
    for (const [table, eventNames] of [
      ['Runs', ['MODIFY']],
      ['Settings', ['INSERT', 'MODIFY']],
    ] as const) {
      expect(propertiesOf(dev, tableLogicalId(dev, table)).StreamSpecification).toEqual({
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      });
      const mapping = mappings.find(
        (candidate) =>
          JSON.stringify(candidate.EventSourceArn) ===
          JSON.stringify({ 'Fn::GetAtt': [tableLogicalId(dev, table), 'StreamArn'] }),
      );
      expect(mapping, table).toMatchObject({
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BisectBatchOnFunctionError: true,
        StartingPosition: 'TRIM_HORIZON',
        DestinationConfig: {
          OnFailure: {
            Destination: {
              'Fn::GetAtt': [logicalIdOf(dev.stack.eventDelivery.streamDeadLetterQueue), 'Arn'],
            },
          },
        },
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
    const actions = statementsOf(dev, dev.stack.eventDelivery.eventRelay).flatMap(actionsOf);
    expect(actions).toContain('dynamodb:PutItem');
    expect(actions).not.toContain('dynamodb:GetItem');
    expect(actions).not.toContain('dynamodb:Query');
  });

  it('lets only the event deliverer put events on the bus, and adds a bus policy only for the consumer accounts', () => {
    const busId = logicalIdOf(dev.stack.stateful.eventBus);
    const putters = rolesWithStatement(
      dev,
      (statement) =>
        actionsOf(statement).includes('events:PutEvents') &&
        referencedLogicalIds(statement.Resource).has(busId),
    );
    expect(putters).toEqual([logicalIdOf(dev.stack.eventDelivery.eventDeliverer.role)]);
    expect(resourcesOfType(dev, 'AWS::Events::EventBusPolicy')).toHaveLength(0);

    const shared = synthesize({ stage: 'dev', eventBusConsumerAccounts: ['111111111111'] });
    const policies = JSON.stringify(resourcesOfType(shared, 'AWS::Events::EventBusPolicy'));
    expect(policies).toContain('111111111111');
    expect(policies).toContain('events:creatorAccount');
    expect(() => synthesize({ stage: 'dev', eventBusConsumerAccounts: ['everyone'] })).toThrow(/12-digit/);
  });
});
