/**
 * The whole system on one machine: DynamoDB Local, the tables from the CDK's definitions, the
 * local queue and its DLQ behind an SQS-protocol endpoint, the worker and dead-letter Lambdas on
 * SQS event sources, and the local API Gateway serving the route table — all with the very
 * handler modules that deploy, configured through the same environment variables as on AWS.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../lambdas/platform/aws.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  MAX_RECEIVE_COUNT,
  ROUTES,
  SYNTHESIS_WORKER,
  WORKER_TIMEOUT_SECONDS,
} from '../lambdas/routes.ts';
import { writeAppAssetsModule } from '../web/build.ts';
import { createTables, findFreePort, startDynamoDbLocal, type TableNames, tableEnv } from './dynamodb.ts';
import { moduleHandlerLoader, startLocalGateway } from './gateway.ts';
import { LocalQueue, type SqsLambdaHandler, startSqsEndpoint } from './queue.ts';
import { hashSeedPasswords, type SeedTeam, seedLocalData } from './seed.ts';

export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Where seed.json goes; `.local` by default. */
  stateDir?: string;
  quiet?: boolean;
  /** Shorter queue timings for tests (the defaults mirror the CDK stack). */
  visibilityTimeoutMs?: number;
  extraEnv?: Record<string, string>;
}

export interface LocalStack {
  apiUrl: string;
  dynamodbEndpoint: string;
  teams: SeedTeam[];
  stop(): Promise<void>;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const REGION = 'us-east-1';
const ACCOUNT_ID = '000000000000';
const TABLE_PREFIX = 'local-';

function localTableNames(): TableNames {
  return { Runs: `${TABLE_PREFIX}Runs`, Data: `${TABLE_PREFIX}Data`, Auth: `${TABLE_PREFIX}Auth` };
}

/** Starts every part, seeds two teams and writes `<stateDir>/seed.json`; `stop()` ends it all. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  const stateDir = options.stateDir ?? '.local';
  try {
    // Java takes seconds to boot: everything that does not need the database runs meanwhile.
    const dynamodbPort = await findFreePort();
    const dynamodbEndpoint = `http://127.0.0.1:${dynamodbPort}`;
    const dynamodbStarting = startDynamoDbLocal({ port: dynamodbPort });
    stops.push(async () => (await dynamodbStarting).stop());
    const passwordsHashing = hashSeedPasswords();
    // The review application, built into the module the serve-app handler embeds (as cdk synth does).
    const webBuilding = writeAppAssetsModule();
    webBuilding.catch(() => undefined); // awaited below; this keeps an early failure elsewhere from leaving it unhandled

    const deadLetters = new LocalQueue({ name: 'synthesis-jobs-dlq', region: REGION, accountId: ACCOUNT_ID });
    const jobs = new LocalQueue({
      name: 'synthesis-jobs',
      region: REGION,
      accountId: ACCOUNT_ID,
      deadLetterQueue: deadLetters,
      maxReceiveCount: MAX_RECEIVE_COUNT,
      ...(options.visibilityTimeoutMs ? { visibilityTimeoutMs: options.visibilityTimeoutMs } : {}),
    });
    const sqs = await startSqsEndpoint({ [jobs.name]: jobs, [deadLetters.name]: deadLetters });
    stops.push(() => sqs.stop());
    const tables = localTableNames();

    // The handlers read their configuration from the environment at import time, as on Lambda.
    Object.assign(process.env, {
      ...tableEnv(tables),
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SYNTHESIS_QUEUE_URL: sqs.queueUrl(jobs.name),
      POWERTOOLS_SERVICE_NAME: 'pipeline-synthesis-api-local',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      // On AWS the signing key comes from Secrets Manager; locally a fresh one per start.
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      EMAIL_OUTBOX_DIR: path.resolve(stateDir, 'outbox'),
      ...options.extraEnv,
    });

    await webBuilding;
    const loadHandler = moduleHandlerLoader(new URL('../lambdas/handlers/', import.meta.url));
    const consumerOf = async (entry: string) => (await loadHandler(entry)) as SqsLambdaHandler;
    const worker = jobs.attachConsumer(await consumerOf(SYNTHESIS_WORKER.entry), {
      batchSize: 5,
      maxConcurrency: 5,
      functionName: SYNTHESIS_WORKER.entry,
      timeoutMs: WORKER_TIMEOUT_SECONDS * 1000,
    });
    stops.push(() => worker.stop());
    const deadLetterConsumer = deadLetters.attachConsumer(await consumerOf(DEAD_LETTER_HANDLER.entry), {
      batchSize: 10,
      functionName: DEAD_LETTER_HANDLER.entry,
    });
    stops.push(() => deadLetterConsumer.stop());

    const gateway = await startLocalGateway({
      port: options.port ?? 3000,
      host: options.host ?? '127.0.0.1',
      routes: ROUTES,
      loadHandler,
      authorizerEntry: AUTHORIZER.entry,
      region: REGION,
      accountId: ACCOUNT_ID,
      quiet: options.quiet ?? false,
    });
    stops.push(() => gateway.stop());
    await gateway.preload();
    // Magic links open the review application on this gateway; the handlers read APP_URL on first use.
    process.env.APP_URL ??= `${gateway.url}/app`;

    const dynamodb = await dynamodbStarting;
    const client = new DynamoDBClient({
      endpoint: dynamodb.endpoint,
      region: REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    await createTables(client, TABLE_PREFIX);
    const teams = await seedLocalData(
      createDocumentClient(client),
      { data: tables.Data, auth: tables.Auth },
      await passwordsHashing,
    );
    await mkdir(stateDir, { recursive: true });
    const seed = { apiUrl: gateway.url, dynamodbEndpoint: dynamodb.endpoint, teams };
    await writeFile(`${stateDir}/seed.json`, `${JSON.stringify(seed, null, 2)}\n`, { mode: 0o600 });

    return { apiUrl: gateway.url, dynamodbEndpoint: dynamodb.endpoint, teams, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
