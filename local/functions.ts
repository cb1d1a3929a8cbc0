/**
 * Every function the CDK stack defines, as the local stack runs it: the same handler entries,
 * timeouts and concurrency (lambdas/functions.ts and the operation declarations), the same environment variables
 * (lambdas/function-environment.ts) with local endpoints in place of AWS resources, and nothing
 * more: a function does not see another's variables.
 */
import { availableParallelism } from 'node:os';
import {
  accessEnvironment,
  type EnvironmentSources,
  writtenTables,
} from '../lambdas/function-environment.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  DEFAULT_MEMORY_MB,
  EVENT_DELIVERER,
  EVENT_RELAY,
  type FunctionDefinition,
  GUARDRAIL_JUDGE,
  HTTP_FUNCTION_TIMEOUT_SECONDS,
  PIPELINE_DELETER,
  RETENTION_JOB,
  RUN_SWEEPER,
  SYNTHESIS_WORKER,
  WEBHOOK_DELIVERER,
} from '../lambdas/functions.ts';
import { type HttpMethod, moduleOf } from '../lambdas/operations/declaration.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import type { TableDefinition } from '../lambdas/store/table-definitions.ts';
import { handlerEntryPath, operationEntryPath } from '../lib/bundling.ts';
import { SERVICE_NAME } from '../lib/names.ts';
import type { GatewayRoute } from './gateway/routing.ts';

export interface LocalFunctionDefinition {
  /** The handler entry (lambdas/handlers/<entry>.ts), also the function's local name. */
  entry: string;
  entryFile: string;
  environment: Record<string, string>;
  timeoutMs: number;
  memoryMb: number;
  /** Environments at once: the event source's maxConcurrency, or LOCAL_MAX_ENVIRONMENTS for HTTP functions. */
  maxEnvironments: number;
  /** The tables its access lets it write: after its invocations, their stream readers read at once. */
  writes: TableDefinition['id'][];
}

/**
 * Environments per HTTP function: one per CPU, at least 2. Lambda would start up to the account's
 * concurrency limit (1,000 by default); on a laptop more processes than CPUs only add contention
 * (measured: at 16 concurrent polls on 2 CPUs, 8 environments per function served 0.28 × the
 * requests 2 did), so invocations beyond this wait for a free environment (never a throttle).
 */
export const LOCAL_MAX_ENVIRONMENTS = Math.max(2, availableParallelism());

/** What every local function gets besides its access: what Lambda's role and region would give. */
export interface LocalPlatform {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** POWERTOOLS log level (LOG_LEVEL); metrics lines are printed only at DEBUG. */
  logLevel: string;
}

/** The gateway's routes: one per operation, to the function of its module. */
export function localRoutes(operations = OPERATIONS): Array<GatewayRoute & { method: HttpMethod }> {
  return operations.map((operation) => ({
    method: operation.method,
    path: operation.path,
    entry: moduleOf(operation),
    authorized: operation.public === undefined,
  }));
}

/** All functions of the stack: one per operation module, the authorizer, the worker, the DLQ handler, the sweeper. */
export function localFunctions(
  sources: EnvironmentSources,
  platform: LocalPlatform,
  maxEnvironments = LOCAL_MAX_ENVIRONMENTS,
): Map<string, LocalFunctionDefinition> {
  const handlers: FunctionDefinition[] = [
    AUTHORIZER,
    SYNTHESIS_WORKER,
    DEAD_LETTER_HANDLER,
    RUN_SWEEPER,
    PIPELINE_DELETER,
    RETENTION_JOB,
    EVENT_DELIVERER,
    EVENT_RELAY,
    WEBHOOK_DELIVERER,
    GUARDRAIL_JUDGE,
  ];
  const common = platformEnvironment(platform);
  const handlerFunctions = handlers.map(
    (definition): LocalFunctionDefinition => ({
      entry: definition.entry,
      entryFile: handlerEntryPath(definition.entry),
      environment: { ...common, ...accessEnvironment(definition.access, sources) },
      writes: writtenTables(definition.access),
      timeoutMs: (definition.timeoutSeconds ?? HTTP_FUNCTION_TIMEOUT_SECONDS) * 1000,
      memoryMb: definition.memoryMb ?? DEFAULT_MEMORY_MB,
      // An SQS event source scales to at least 2 concurrent invocations; a stream shard is read by one.
      maxEnvironments: definition.streamSources
        ? definition.streamSources.length
        : definition.eventSource
          ? (definition.eventSource.maxConcurrency ?? 2)
          : maxEnvironments,
    }),
  );
  const apiFunctions = operationFunctions(OPERATIONS).map(
    (definition): LocalFunctionDefinition => ({
      entry: definition.module,
      entryFile: operationEntryPath(definition.module),
      environment: { ...common, ...accessEnvironment(definition.access, sources) },
      writes: writtenTables(definition.access),
      timeoutMs: definition.timeoutSeconds * 1000,
      memoryMb: definition.memoryMb,
      maxEnvironments,
    }),
  );
  return new Map([...handlerFunctions, ...apiFunctions].map((definition) => [definition.entry, definition]));
}

/** What Lambda's role and region give every function, with the local endpoints in place of AWS's. */
function platformEnvironment(platform: LocalPlatform): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    LOG_LEVEL: platform.logLevel,
    // Lambda hands every function its role's credentials in these variables.
    AWS_ACCESS_KEY_ID: platform.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: platform.credentials.secretAccessKey,
    // The local endpoints stand in for the region's.
    AWS_ENDPOINT_URL_DYNAMODB: platform.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: platform.sqsEndpoint,
    ...(platform.logLevel.toUpperCase() === 'DEBUG' ? {} : { POWERTOOLS_METRICS_DISABLED: 'true' }),
  };
}
