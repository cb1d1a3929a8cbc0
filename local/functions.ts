/**
 * Every function the CDK stack defines, as the local stack runs it: the same handler entries,
 * timeouts and concurrency (lambdas/routes.ts), the same environment variables
 * (lambdas/function-environment.ts) with local endpoints in place of AWS resources, and nothing
 * more: a function does not see another's variables.
 */
import { availableParallelism } from 'node:os';
import { accessEnvironment, type EnvironmentSources } from '../lambdas/function-environment.ts';
import {
  AUTHORIZER,
  DEAD_LETTER_HANDLER,
  DEFAULT_MEMORY_MB,
  type FunctionDefinition,
  HTTP_FUNCTION_TIMEOUT_SECONDS,
  ROUTES,
  RUN_SWEEPER,
  SYNTHESIS_WORKER,
} from '../lambdas/routes.ts';
import { handlerEntryPath } from '../lib/bundling.ts';
import { SERVICE_NAME } from '../lib/names.ts';

export interface LocalFunctionDefinition {
  /** The handler entry (lambdas/handlers/<entry>.ts), also the function's local name. */
  entry: string;
  entryFile: string;
  environment: Record<string, string>;
  timeoutMs: number;
  memoryMb: number;
  /** Environments at once: the event source's maxConcurrency, or LOCAL_MAX_ENVIRONMENTS for HTTP functions. */
  maxEnvironments: number;
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

/** All functions of the stack: one per route entry, the authorizer, the worker, the DLQ handler, the sweeper. */
export function localFunctions(
  sources: EnvironmentSources,
  platform: LocalPlatform,
  maxEnvironments = LOCAL_MAX_ENVIRONMENTS,
): Map<string, LocalFunctionDefinition> {
  const definitions: FunctionDefinition[] = [AUTHORIZER, SYNTHESIS_WORKER, DEAD_LETTER_HANDLER, RUN_SWEEPER];
  for (const route of ROUTES) {
    // Routes that share an entry share one function (the CDK stack builds one per entry).
    if (!definitions.some((definition) => definition.entry === route.entry))
      definitions.push({ entry: route.entry, access: route.access });
  }
  const common: Record<string, string> = {
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
  return new Map(
    definitions.map((definition) => [
      definition.entry,
      {
        entry: definition.entry,
        entryFile: handlerEntryPath(definition.entry),
        environment: { ...common, ...accessEnvironment(definition.access, sources) },
        timeoutMs: (definition.timeoutSeconds ?? HTTP_FUNCTION_TIMEOUT_SECONDS) * 1000,
        memoryMb: definition.memoryMb ?? DEFAULT_MEMORY_MB,
        // An SQS event source scales to at least 2 concurrent invocations.
        maxEnvironments: definition.eventSource
          ? (definition.eventSource.maxConcurrency ?? 2)
          : maxEnvironments,
      },
    ]),
  );
}
