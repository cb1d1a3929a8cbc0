/**
 * The whole system on one machine: DynamoDB Local with the tables from the CDK's definitions, the
 * local queue and its DLQ behind an SQS-protocol endpoint, their event sources, the sweeper's
 * schedule, and the local API Gateway serving the operations' routes. Every function runs as on Lambda:
 * its esbuild bundle, in execution environments of its own (worker threads on Node 24 in UTC, child
 * processes otherwise), with the environment variables the CDK stack gives it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  EVENT_DELIVERER,
  EVENT_RELAY,
  GUARDRAIL_JUDGE,
  GUARDRAIL_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  MAX_RECEIVE_COUNT,
  PIPELINE_DELETER,
  RETENTION_JOB,
  RUN_SWEEPER,
  SYNTHESIS_WORKER,
  WEBHOOK_DELIVERER,
  WEBHOOK_MAX_RECEIVE_COUNT,
  WEBHOOK_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
} from '../lambdas/functions.ts';
import { type AbuseLimits, limitsFrom } from '../lambdas/limits.ts';
import { writeOpenApiDocumentModule } from '../lambdas/operations/openapi-build.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { onDemandParts } from '../lib/bundling.ts';
import { writeAppAssetsModule } from '../web/build.ts';
import { createTables, type TableId, type TableNames } from './dynamodb.ts';
import { type EarlyStarts, LOCAL_CACHE_DIR, type SeedPassword, startEarly } from './early.ts';
import { type LocalFunctionDefinition, localFunctions, localRoutes } from './functions.ts';
import { LocalRateLimits } from './gateway/rate-limit.ts';
import { startLocalGateway } from './gateway/server.ts';
import { type SqsEndpoint, startSqsEndpoint } from './queue/endpoint.ts';
import { startEventSource } from './queue/event-source.ts';
import { LocalQueue } from './queue/queue.ts';
import { buildFunctionsCached } from './runtime/bundles.ts';
import { LocalFunction } from './runtime/lambda-function.ts';
import { type FunctionNode, functionNode } from './runtime/node.ts';
import { startSchedule } from './scheduler.ts';
import { type SeedTeam, seedLocalData } from './seed.ts';
import { StreamReaders } from './streams/stack-streams.ts';

export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Where seed.json, the bundles and the outbox go; `.local` by default. */
  stateDir?: string;
  /** No access line per request. */
  quiet?: boolean;
  /** Shorter queue timings for tests (the defaults mirror the CDK stack). */
  visibilityTimeoutMs?: number;
  /** The sweeper's period; RUN_SWEEPER.scheduleMinutes by default. */
  sweepEveryMs?: number;
  /** The retention job's period; RETENTION_JOB.scheduleMinutes by default. */
  retentionEveryMs?: number;
  /** The functions' LOG_LEVEL; LOG_LEVEL from the environment, else WARN. */
  logLevel?: string;
  /** Where the functions' log lines, access lines and the stack's own warnings go; stderr by default. */
  log?: (line: string) => void;
  /** Rate limits and quota; from RATE_LIMIT_PER_SECOND and the other variables of lambdas/limits.ts by default. */
  limits?: AbuseLimits;
  /** The slow parts, already started by the caller before this module loaded (local/start.ts). */
  early?: EarlyStarts;
}

export interface LocalStack {
  apiUrl: string;
  dynamodbEndpoint: string;
  tables: TableNames;
  teams: SeedTeam[];
  /** The local functions by entry (for tests and diagnostics). */
  functions: ReadonlyMap<string, LocalFunction>;
  /** Node of the functions' environments, and a warning when it is not Lambda's. */
  node: { version: string; warning?: string };
  /** How long each phase of the start took, in the order they ended (`npm start` prints them at debug). */
  phases: StartPhase[];
  stop(): Promise<void>;
}

/** One phase of the start: milliseconds from the start of startLocalStack to its beginning and end. */
export interface StartPhase {
  name: string;
  startMs: number;
  endMs: number;
}

/** Records when `work` begins and ends, relative to `origin`. */
function phaseTimer(origin: number, phases: StartPhase[]) {
  return <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const startMs = performance.now() - origin;
    const done = () => phases.push({ name, startMs, endMs: performance.now() - origin });
    return work().finally(done);
  };
}

/** The early starts as phases (they may have begun before `origin`: negative starts). */
function recordEarly(early: EarlyStarts, origin: number, phases: StartPhase[]): void {
  const startMs = early.atMs - origin;
  const record = (name: string) => () => phases.push({ name, startMs, endMs: performance.now() - origin });
  early.dynamodb.then(record('dynamodb'), () => undefined);
  early.passwords.then(record('passwords'), () => undefined);
}

/** The phases as one line: `name duration (start–end)`, in the order they ended. */
export function formatPhases(phases: readonly StartPhase[]): string {
  const ms = (value: number) => value.toFixed(0);
  return phases
    .map(
      (phase) =>
        `${phase.name} ${ms(phase.endMs - phase.startMs)} ms (${ms(phase.startMs)}–${ms(phase.endMs)})`,
    )
    .join(', ');
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const REGION = 'us-east-1';
const ACCOUNT_ID = '000000000000';
const TABLE_PREFIX = 'local-';

/**
 * The longest wait of an idle stream shard. Lambda reads one four times a second; here every write
 * of the stack's functions wakes the readers of the tables it may write (StreamReaders.wake), so an
 * idle shard is read every 2 s (a write from outside the stack, say the AWS CLI, is read within it):
 * an idle stack then costs a laptop about a third of the CPU it did.
 */
const STREAM_IDLE_POLL_MAX_MS = 2_000;

function localTableNames(): TableNames {
  return {
    Runs: `${TABLE_PREFIX}Runs`,
    Data: `${TABLE_PREFIX}Data`,
    Auth: `${TABLE_PREFIX}Auth`,
    Events: `${TABLE_PREFIX}Events`,
    Settings: `${TABLE_PREFIX}Settings`,
  };
}

/** The developer's ANTHROPIC_* settings, for the function that calls the model. */
function modelSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('ANTHROPIC_') && entry[1] !== undefined,
    ),
  );
}

/** Starts every part, seeds two teams and writes `<stateDir>/seed.json`; `stop()` ends it all. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  const stateDir = path.resolve(options.stateDir ?? '.local');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let functionsReady: (ready: boolean) => void = () => {};
  const phases: StartPhase[] = [];
  const origin = performance.now();
  const timed = phaseTimer(origin, phases);
  try {
    // Java takes seconds to boot: everything that does not need the database runs meanwhile.
    const early = options.early ?? (await startEarly());
    const dynamodbEndpoint = `http://127.0.0.1:${early.dynamodbPort}`;
    const dynamodbStarting = early.dynamodb;
    stops.push(async () => (await dynamodbStarting).stop());
    const passwordsHashing = early.passwords;
    // The review application and the OpenAPI document, built into the modules the serve-app and
    // get-openapi functions embed (as cdk synth does).
    const webBuilding = timed('web', () =>
      Promise.all([writeAppAssetsModule(), writeOpenApiDocumentModule()]),
    );
    webBuilding.catch(() => undefined); // awaited below; an earlier failure must not leave it unhandled
    recordEarly(early, origin, phases);

    const queues = await timed('queues', () => startQueues(options));
    stops.push(() => queues.sqs.stop());

    const limits = options.limits ?? limitsFrom((variable) => process.env[variable]);
    // The gateway listens first: its URL is the magic links' APP_URL. Requests wait for the functions.
    const functions = new Map<string, LocalFunction>();
    const ready = new Promise<boolean>((resolve) => {
      functionsReady = resolve;
    });
    const gateway = await timed('gateway', () =>
      startLocalGateway({
        port: options.port ?? 3000,
        host: options.host ?? '127.0.0.1',
        routes: localRoutes(),
        authorizerEntry: AUTHORIZER.entry,
        region: REGION,
        accountId: ACCOUNT_ID,
        quiet: options.quiet ?? false,
        log,
        rateLimits: new LocalRateLimits(limits),
        invoke: async (entry, event, requestId) => {
          const fn = (await ready) ? functions.get(entry) : undefined;
          if (fn === undefined) throw new Error(`No local function for ${entry}`);
          return fn.invoke(event, requestId);
        },
      }),
    );
    stops.push(() => gateway.stop());

    const node = functionNode();
    if (node.warning) log(`[local] ${node.warning}`);
    const definitions = functionDefinitions({
      options,
      stateDir,
      limits,
      gatewayUrl: gateway.url,
      dynamodbEndpoint,
      queues,
    });
    // The tables and the seed need only DynamoDB Local: they run while the bundles build.
    const database = (async () => {
      const dynamodb = await dynamodbStarting;
      const client = new DynamoDBClient({
        endpoint: dynamodb.endpoint,
        region: REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      const tables = await timed('tables', () => createTables(client, TABLE_PREFIX));
      return { dynamodb, client, tables };
    })();
    const seeding = database.then(async ({ client, tables }) => {
      const passwords = await passwordsHashing;
      return timed('seed', () => seedDatabase(client, tables, passwords));
    });
    // Awaited below; an earlier failure must not leave them unhandled.
    database.catch(() => undefined);
    seeding.catch(() => undefined);
    await webBuilding;
    // The stream sources; a function that may write a table wakes that table's readers.
    const streamReaders = new StreamReaders();
    await timed('bundles', () =>
      startFunctions(definitions, node, functions, log, (tables) => streamReaders.wake(tables)),
    );
    stops.push(() => Promise.all([...functions.values()].map((fn) => fn.stop())));
    functionsReady(true);
    startTriggers(queues, functions, options, log, stops);

    const { dynamodb, client, tables } = await database;
    // The outbox's stream, and the runs' and settings' streams whose writes carry events, once their
    // functions exist: they start while the seed is written (what the seed writes is read from the
    // streams' start all the same). Those that started are stopped with the stack, even if another
    // part failed.
    stops.push(() => streamReaders.stop());
    const streams = timed('streams', async () => {
      const readers = [EVENT_DELIVERER, EVENT_RELAY].map((definition) => {
        const reader = functions.get(definition.entry);
        if (reader === undefined) throw new Error(`No local function for ${definition.entry}`);
        return { streamSources: definition.streamSources, invoke: (event: unknown) => reader.invoke(event) };
      });
      await streamReaders.start(readers, {
        client,
        tableNames: tables,
        region: REGION,
        idlePollMaxMs: STREAM_IDLE_POLL_MAX_MS,
        log,
      });
    });
    const [seeded, streamsStarted] = await Promise.allSettled([seeding, streams]);
    if (seeded.status === 'rejected') throw seeded.reason;
    if (streamsStarted.status === 'rejected') throw streamsStarted.reason;
    const teams = seeded.value;
    await writeSeedFile(stateDir, { apiUrl: gateway.url, dynamodbEndpoint: dynamodb.endpoint, teams });

    return {
      apiUrl: gateway.url,
      dynamodbEndpoint: dynamodb.endpoint,
      tables,
      teams,
      functions,
      node: { version: node.version, ...(node.warning ? { warning: node.warning } : {}) },
      phases,
      stop,
    };
  } catch (error) {
    functionsReady(false);
    await stop();
    throw error;
  }
}

interface LocalQueues {
  jobs: LocalQueue;
  deadLetters: LocalQueue;
  /** Deletion jobs (lib/stateful.ts's LifecycleQueue). */
  lifecycle: LocalQueue;
  /** Webhook deliveries and their DLQ. */
  webhooks: LocalQueue;
  webhookDeadLetters: LocalQueue;
  /** Rollouts to judge (lib/stateful.ts's GuardrailQueue) and their DLQ. */
  guardrails: LocalQueue;
  guardrailDeadLetters: LocalQueue;
  /** Every queue behind the SQS protocol, for the functions' SDK clients. */
  sqs: SqsEndpoint;
}

/** The synthesis jobs queue and its DLQ, as the CDK stack configures them, behind one endpoint. */
async function startQueues(options: LocalStackOptions): Promise<LocalQueues> {
  const deadLetters = new LocalQueue({ name: 'synthesis-jobs-dlq', region: REGION, accountId: ACCOUNT_ID });
  const jobs = new LocalQueue({
    name: 'synthesis-jobs',
    region: REGION,
    accountId: ACCOUNT_ID,
    deadLetterQueue: deadLetters,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    ...(options.visibilityTimeoutMs ? { visibilityTimeoutMs: options.visibilityTimeoutMs } : {}),
  });
  const lifecycleDeadLetters = new LocalQueue({
    name: 'lifecycle-jobs-dlq',
    region: REGION,
    accountId: ACCOUNT_ID,
  });
  const lifecycle = new LocalQueue({
    name: 'lifecycle-jobs',
    region: REGION,
    accountId: ACCOUNT_ID,
    deadLetterQueue: lifecycleDeadLetters,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    ...(options.visibilityTimeoutMs ? { visibilityTimeoutMs: options.visibilityTimeoutMs } : {}),
  });
  const webhookDeadLetters = new LocalQueue({
    name: 'webhook-deliveries-dlq',
    region: REGION,
    accountId: ACCOUNT_ID,
  });
  const webhooks = new LocalQueue({
    name: 'webhook-deliveries',
    region: REGION,
    accountId: ACCOUNT_ID,
    deadLetterQueue: webhookDeadLetters,
    maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT,
    visibilityTimeoutMs: WEBHOOK_QUEUE_VISIBILITY_TIMEOUT_SECONDS * 1000,
  });
  const guardrailDeadLetters = new LocalQueue({
    name: 'guardrail-checks-dlq',
    region: REGION,
    accountId: ACCOUNT_ID,
  });
  const guardrails = new LocalQueue({
    name: 'guardrail-checks',
    region: REGION,
    accountId: ACCOUNT_ID,
    deadLetterQueue: guardrailDeadLetters,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    // As on AWS, whatever the test timings: the batching window must fit in it.
    visibilityTimeoutMs: GUARDRAIL_QUEUE_VISIBILITY_TIMEOUT_SECONDS * 1000,
  });
  const sqs = await startSqsEndpoint({
    [jobs.name]: jobs,
    [deadLetters.name]: deadLetters,
    [lifecycle.name]: lifecycle,
    [lifecycleDeadLetters.name]: lifecycleDeadLetters,
    [webhooks.name]: webhooks,
    [webhookDeadLetters.name]: webhookDeadLetters,
    [guardrails.name]: guardrails,
    [guardrailDeadLetters.name]: guardrailDeadLetters,
  });
  return {
    jobs,
    deadLetters,
    lifecycle,
    webhooks,
    webhookDeadLetters,
    guardrails,
    guardrailDeadLetters,
    sqs,
  };
}

/** Every function with the environment the CDK stack gives it, local endpoints in place of AWS's. */
function functionDefinitions(settings: {
  options: LocalStackOptions;
  stateDir: string;
  limits: AbuseLimits;
  gatewayUrl: string;
  dynamodbEndpoint: string;
  queues: LocalQueues;
}): Map<string, LocalFunctionDefinition> {
  const { options, stateDir, limits, gatewayUrl, dynamodbEndpoint, queues } = settings;
  return localFunctions(
    {
      tableNames: localTableNames(),
      synthesisQueueUrl: queues.sqs.queueUrl(queues.jobs.name),
      lifecycleQueueUrl: queues.sqs.queueUrl(queues.lifecycle.name),
      guardrailQueueUrl: queues.sqs.queueUrl(queues.guardrails.name),
      // On AWS the signing key comes from Secrets Manager; locally a fresh one per start.
      sessionSecret: { SESSION_SECRET: randomBytes(32).toString('base64url') },
      email: {
        EMAIL_FROM: 'Pipeline Synthesis <no-reply@localhost>',
        // Magic links open the review application on this gateway.
        APP_URL: process.env.APP_URL ?? `${gatewayUrl}/app`,
        EMAIL_OUTBOX_DIR: path.join(stateDir, 'outbox'),
      },
      model: modelSettings(),
      ...(process.env.DEFAULT_SYNTHESIS_HANDLER
        ? { defaultSynthesisHandler: process.env.DEFAULT_SYNTHESIS_HANDLER }
        : {}),
      synthesisRunsPerTeamPerHour: limits.synthesisRunsPerTeamPerHour,
      // No EventBridge locally: no EVENT_BUS_NAME, the deliverer skips the put (README).
      webhooks: {
        queueUrl: queues.sqs.queueUrl(queues.webhooks.name),
        // On AWS the key comes from Secrets Manager; locally a fresh one per start.
        secretKey: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url') },
        allowLocalUrls: true,
      },
    },
    {
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
      dynamodbEndpoint,
      sqsEndpoint: queues.sqs.endpoint,
      logLevel: options.logLevel ?? process.env.LOG_LEVEL ?? 'WARN',
    },
  );
}

/** Builds the functions' bundles and puts a local function per definition into `functions`. */
async function startFunctions(
  definitions: Map<string, LocalFunctionDefinition>,
  node: FunctionNode,
  functions: Map<string, LocalFunction>,
  log: (line: string) => void,
  wakeReaders: (tables: readonly TableId[]) => void,
): Promise<void> {
  const built = await buildFunctionsCached(
    [...definitions.values()].map((definition) => ({
      name: definition.entry,
      entryFile: definition.entryFile,
      parts: onDemandParts(definition.entry),
    })),
    LOCAL_CACHE_DIR,
  );
  for (const definition of definitions.values()) {
    const name = `local-${definition.entry}`;
    functions.set(
      definition.entry,
      new LocalFunction({
        name,
        bundle: built.bundles.get(definition.entry) ?? '',
        host: built.host,
        execPath: node.execPath,
        environment: definition.environment,
        timeoutMs: definition.timeoutMs,
        memoryMb: definition.memoryMb,
        maxEnvironments: definition.maxEnvironments,
        region: REGION,
        accountId: ACCOUNT_ID,
        log: (line) => log(`[${name}] ${line}`),
        ...(definition.writes.length > 0 ? { afterInvocation: () => wakeReaders(definition.writes) } : {}),
      }),
    );
  }
}

/** Starts the queues' event sources and the sweeper's schedule, each added to `stops` once started. */
function startTriggers(
  queues: LocalQueues,
  functions: ReadonlyMap<string, LocalFunction>,
  options: LocalStackOptions,
  log: (line: string) => void,
  stops: Array<() => Promise<unknown>>,
): void {
  const { jobs, deadLetters, webhooks } = queues;
  const functionOf = (entry: string) => {
    const fn = functions.get(entry);
    if (fn === undefined) throw new Error(`No local function for ${entry}`);
    return fn;
  };

  // Each queue invokes its function as Lambda's SQS event source does, with its batch and concurrency.
  for (const [queue, definition] of [
    [jobs, SYNTHESIS_WORKER],
    [deadLetters, DEAD_LETTER_HANDLER],
    [queues.lifecycle, PIPELINE_DELETER],
    [webhooks, WEBHOOK_DELIVERER],
    [queues.guardrails, GUARDRAIL_JUDGE],
  ] as const) {
    const fn = functionOf(definition.entry);
    const source = startEventSource(queue, (event) => fn.invoke(event), {
      ...definition.eventSource,
      functionName: fn.name,
      log,
    });
    stops.push(() => source.stop());
  }
  const sweeper = functionOf(RUN_SWEEPER.entry);
  const sweeps = startSchedule({
    everyMs: options.sweepEveryMs ?? RUN_SWEEPER.scheduleMinutes * 60_000,
    ruleName: 'sweep-stuck-runs',
    region: REGION,
    accountId: ACCOUNT_ID,
    invoke: (event) => sweeper.invoke(event),
    log,
  });
  stops.push(() => sweeps.stop());
  const retentionJob = functionOf(RETENTION_JOB.entry);
  const retention = startSchedule({
    everyMs: options.retentionEveryMs ?? RETENTION_JOB.scheduleMinutes * 60_000,
    ruleName: 'apply-retention',
    region: REGION,
    accountId: ACCOUNT_ID,
    invoke: (event) => retentionJob.invoke(event),
    log,
  });
  stops.push(() => retention.stop());
}

/** Seeds two teams into the tables of DynamoDB Local. */
function seedDatabase(
  client: DynamoDBClient,
  tables: TableNames,
  passwords: SeedPassword[],
): Promise<SeedTeam[]> {
  return seedLocalData(
    createDocumentClient(client),
    { data: tables.Data, auth: tables.Auth, events: tables.Events },
    passwords,
  );
}

/** `<stateDir>/seed.json`: the URLs and the seeded teams' credentials, readable by its owner only. */
async function writeSeedFile(
  stateDir: string,
  seed: { apiUrl: string; dynamodbEndpoint: string; teams: SeedTeam[] },
): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  await writeFile(path.join(stateDir, 'seed.json'), `${JSON.stringify(seed, null, 2)}\n`, { mode: 0o600 });
}
