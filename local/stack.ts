/**
 * The whole system on one machine: DynamoDB Local with the tables from the CDK's definitions, every
 * queue of lambdas/queues.ts behind an SQS-protocol endpoint, the handlers' triggers (event sources,
 * schedules, stream readers) from their declarations, and the local API Gateway serving the
 * operations' routes. Every function runs as on Lambda: its esbuild bundle, in execution environments
 * of its own (worker threads by default, child processes where Lambda's time zone cannot be had),
 * with the environment variables the CDK stack gives it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AUTHORIZER } from '../lambdas/functions.ts';
import { type AbuseLimits, limitsFrom } from '../lambdas/limits.ts';
import { evaluationPaths } from '../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import { writeOpenApiDocumentModule } from '../lambdas/operations/openapi-build.ts';
import type { WorkQueueName } from '../lambdas/queues.ts';
import { TABLE_DEFINITIONS } from '../lambdas/store/table-definitions.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { writeAppAssetsModule } from '../web/build.ts';
import { createTables, type TableNames } from './dynamodb.ts';
import { type EarlyStarts, LOCAL_CACHE_DIR, type SeedPassword, startEarly } from './early.ts';
import { localEnvironmentSources } from './environment.ts';
import { localFunctions, localRoutes, startFunctions } from './functions.ts';
import { LocalRateLimits } from './gateway/rate-limit.ts';
import { type LocalGateway, startLocalGateway } from './gateway/server.ts';
import { phaseTimer, recordEarly, type StartPhase } from './phases.ts';
import { type LocalQueues, startLocalQueues } from './queue/queues.ts';
import type { LocalFunction } from './runtime/lambda-function.ts';
import { functionNode } from './runtime/node.ts';
import { type SeedTeam, seedLocalData } from './seed.ts';
import { type StreamReader, StreamReaders } from './streams/stack-streams.ts';
import { localTriggers, startTriggers, streamReaders } from './triggers.ts';

export { formatPhases, type StartPhase } from './phases.ts';

export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Where seed.json, the bundles and the outbox go; `.local` by default. */
  stateDir?: string;
  /** No access line per request. */
  quiet?: boolean;
  /** Shorter visibility timeouts by queue name, for tests; lambdas/queues.ts's otherwise, as on AWS. */
  visibilityTimeoutMs?: Readonly<Partial<Record<WorkQueueName, number>>>;
  /** Other periods for scheduled handlers by handler entry, for tests; their declarations' otherwise. */
  scheduleEveryMs?: Readonly<Record<string, number>>;
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
  return Object.fromEntries(
    TABLE_DEFINITIONS.map((definition) => [definition.id, `${TABLE_PREFIX}${definition.id}`]),
  ) as TableNames;
}

/** Starts every part, seeds two teams and writes `<stateDir>/seed.json`; `stop()` ends it all. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  const stateDir = path.resolve(options.stateDir ?? '.local');
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const phases: StartPhase[] = [];
  const origin = performance.now();
  const timed = phaseTimer(origin, phases);
  const functions = new Map<string, LocalFunction>();
  let functionsReady: (ready: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => {
    functionsReady = resolve;
  });
  try {
    // Java takes seconds to boot: everything that does not need the database runs meanwhile.
    const early = options.early ?? (await startEarly());
    const dynamodbStarting = early.dynamodb;
    stops.push(async () => (await dynamodbStarting).stop());
    // The review application and the OpenAPI document, built into the modules the serve-app and
    // get-openapi functions embed (as cdk synth does).
    const webBuilding = timed('web', () =>
      Promise.all([writeAppAssetsModule(), writeOpenApiDocumentModule()]),
    );
    webBuilding.catch(() => undefined); // awaited below; an earlier failure must not leave it unhandled
    recordEarly(early, origin, phases);

    const queues = await timed('queues', () =>
      startLocalQueues({
        region: REGION,
        accountId: ACCOUNT_ID,
        ...(options.visibilityTimeoutMs ? { visibilityTimeoutMs: options.visibilityTimeoutMs } : {}),
      }),
    );
    stops.push(() => queues.sqs.stop());
    const triggers = localTriggers(queues.byName, options.scheduleEveryMs);

    const limits = options.limits ?? limitsFrom((variable) => process.env[variable]);
    // The gateway listens first: its URL is the magic links' APP_URL. Requests wait for the functions.
    const gateway = await timed('gateway', () =>
      startGateway(options, limits, log, async (entry) => ((await ready) ? functions.get(entry) : undefined)),
    );
    stops.push(() => gateway.stop());

    const node = functionNode();
    if (node.warning) log(`[local] ${node.warning}`);
    const definitions = functionDefinitions(options, {
      stateDir,
      limits,
      gatewayUrl: gateway.url,
      dynamodbEndpoint: early.dynamodbEndpoint,
      queues,
    });
    // The tables and the seed need only DynamoDB Local: they run while the bundles build.
    const database = startDatabase(early, timed);
    await webBuilding;
    // The stream sources; a function that may write a table wakes that table's readers.
    const readers = new StreamReaders();
    const started = await timed('bundles', () =>
      startFunctions(definitions, {
        node,
        cacheDir: LOCAL_CACHE_DIR,
        region: REGION,
        accountId: ACCOUNT_ID,
        log,
        wakeReaders: (tables) => readers.wake(tables),
      }),
    );
    for (const [entry, fn] of started) functions.set(entry, fn);
    stops.push(() => Promise.all([...functions.values()].map((fn) => fn.stop())));
    functionsReady(true);
    startTriggers(triggers, functions, { region: REGION, accountId: ACCOUNT_ID, log }, stops);

    stops.push(() => readers.stop());
    const streamFed = streamReaders(triggers, functions);
    const { dynamodb, teams, tables } = await seedAndStream(database, readers, streamFed, { timed, log });
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

/** Every function with the environment the CDK stack gives it, local endpoints in place of AWS's. */
function functionDefinitions(
  options: LocalStackOptions,
  local: {
    stateDir: string;
    limits: AbuseLimits;
    gatewayUrl: string;
    dynamodbEndpoint: string;
    queues: LocalQueues;
  },
) {
  return localFunctions(
    localEnvironmentSources({
      tableNames: localTableNames(),
      queueUrls: local.queues.urls,
      stateDir: local.stateDir,
      gatewayUrl: local.gatewayUrl,
      limits: local.limits,
      evaluationRoutes: evaluationPaths(OPERATIONS),
    }),
    {
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
      dynamodbEndpoint: local.dynamodbEndpoint,
      sqsEndpoint: local.queues.sqs.endpoint,
      logLevel: options.logLevel ?? process.env.LOG_LEVEL ?? 'WARN',
    },
  );
}

/** The local API Gateway on the options' port, invoking the function of each route's entry. */
function startGateway(
  options: LocalStackOptions,
  limits: AbuseLimits,
  log: (line: string) => void,
  functionOf: (entry: string) => Promise<LocalFunction | undefined>,
): Promise<LocalGateway> {
  return startLocalGateway({
    port: options.port ?? 3000,
    host: options.host ?? '127.0.0.1',
    routes: localRoutes(),
    authorizerEntry: AUTHORIZER.entry,
    region: REGION,
    accountId: ACCOUNT_ID,
    quiet: options.quiet ?? false,
    log,
    rateLimits: new LocalRateLimits(limits, evaluationPaths(OPERATIONS)),
    invoke: async (entry, event, requestId) => {
      const fn = await functionOf(entry);
      if (fn === undefined) throw new Error(`No local function for ${entry}`);
      return fn.invoke(event, requestId);
    },
  });
}

type Timed = ReturnType<typeof phaseTimer>;
interface Database {
  dynamodb: Awaited<EarlyStarts['dynamodb']>;
  client: DynamoDBClient;
  tables: TableNames;
}

/**
 * DynamoDB Local once it answers, with the tables made, and the seed of two teams written as soon
 * as the tables and the passwords are ready: they need nothing else, so they run while the bundles
 * build. A failure surfaces where they are awaited.
 */
function startDatabase(
  early: EarlyStarts,
  timed: Timed,
): { database: Promise<Database>; seeding: Promise<SeedTeam[]> } {
  const database = (async () => {
    const dynamodb = await early.dynamodb;
    const client = new DynamoDBClient({
      endpoint: dynamodb.endpoint,
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    const tables = await timed('tables', () => createTables(client, TABLE_PREFIX));
    return { dynamodb, client, tables };
  })();
  const seeding = database.then(async ({ client, tables }) => {
    const passwords = await early.passwords;
    return timed('seed', () => seedDatabase(client, tables, passwords));
  });
  // Awaited later; an earlier failure must not leave them unhandled.
  database.catch(() => undefined);
  seeding.catch(() => undefined);
  return { database, seeding };
}

/** Seeds two teams into the tables of DynamoDB Local. */
function seedDatabase(client: DynamoDBClient, tables: TableNames, passwords: SeedPassword[]) {
  return seedLocalData(
    createDocumentClient(client),
    { data: tables.Data, auth: tables.Auth, events: tables.Events },
    passwords,
  );
}

/**
 * Starts the stream sources once the database and the functions exist, while the seed is written
 * (what the seed writes is read from the streams' start all the same). The readers that started are
 * stopped with the stack even if another part failed; then the first failure is thrown.
 */
async function seedAndStream(
  starting: { database: Promise<Database>; seeding: Promise<SeedTeam[]> },
  readers: StreamReaders,
  streamFed: readonly StreamReader[],
  settings: { timed: Timed; log: (line: string) => void },
): Promise<{ dynamodb: Database['dynamodb']; tables: TableNames; teams: SeedTeam[] }> {
  const { dynamodb, client, tables } = await starting.database;
  const streams = settings.timed('streams', () =>
    readers.start(streamFed, {
      client,
      tableNames: tables,
      region: REGION,
      idlePollMaxMs: STREAM_IDLE_POLL_MAX_MS,
      log: settings.log,
    }),
  );
  const [seeded, streamsStarted] = await Promise.allSettled([starting.seeding, streams]);
  if (seeded.status === 'rejected') throw seeded.reason;
  if (streamsStarted.status === 'rejected') throw streamsStarted.reason;
  return { dynamodb, tables, teams: seeded.value };
}

/** `<stateDir>/seed.json`: the URLs and the seeded teams' credentials, readable by its owner only. */
async function writeSeedFile(
  stateDir: string,
  seed: { apiUrl: string; dynamodbEndpoint: string; teams: SeedTeam[] },
): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  await writeFile(path.join(stateDir, 'seed.json'), `${JSON.stringify(seed, null, 2)}\n`, { mode: 0o600 });
}
