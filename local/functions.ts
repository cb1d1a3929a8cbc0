/**
 * Every function the CDK stack defines, as the local stack runs it: the same handler entries,
 * timeouts and concurrency (HANDLERS of lambdas/functions.ts and the operation declarations), the
 * same environment variables (lambdas/function-environment.ts) with local endpoints in place of AWS
 * resources, and nothing more: a function does not see another's variables.
 */
import { availableParallelism } from 'node:os';
import {
  accessEnvironment,
  type EnvironmentSources,
  writtenTables,
} from '../lambdas/function-environment.ts';
import {
  DEFAULT_MEMORY_MB,
  HANDLERS,
  type HandlerDefinition,
  queueTriggerOf,
  runsOnDeploy,
  streamSourcesOf,
} from '../lambdas/functions.ts';
import { type HttpMethod, moduleOf } from '../lambdas/operations/declaration.ts';
import { operationFunctions } from '../lambdas/operations/functions.ts';
import { OPERATIONS } from '../lambdas/operations/index.ts';
import type { TableDefinition } from '../lambdas/store/table-definitions.ts';
import { handlerEntryPath, onDemandParts, operationEntryPath } from '../lib/bundling.ts';
import type { TableId } from './dynamodb.ts';
import { type LocalPlatform, platformEnvironment } from './environment.ts';
import type { GatewayRoute } from './gateway/routing.ts';
import { buildFunctionsCached } from './runtime/bundles.ts';
import { LocalFunction } from './runtime/lambda-function.ts';
import type { FunctionNode } from './runtime/node.ts';

export interface LocalFunctionDefinition {
  /** The handler entry (lambdas/handlers/<entry>.ts) or operation module, also the function's local name. */
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

/** The gateway's routes: one per operation, to the function of its module. */
export function localRoutes(operations = OPERATIONS): Array<GatewayRoute & { method: HttpMethod }> {
  return operations.map((operation) => ({
    method: operation.method,
    path: operation.path,
    entry: moduleOf(operation),
    authorized: operation.public === undefined,
  }));
}

/**
 * Environments of a handler: a stream shard is read by one invocation at a time; an SQS event
 * source scales to its maxConcurrency (at least 2, as Lambda's does).
 */
function handlerEnvironments(handler: HandlerDefinition, maxEnvironments: number): number {
  const streams = streamSourcesOf(handler);
  if (streams.length > 0) return streams.length;
  const queue = queueTriggerOf(handler);
  return queue ? (queue.maxConcurrency ?? 2) : maxEnvironments;
}

/** All functions of the stack: one per handler of HANDLERS (those run on deploy aside) and one per operation module. */
export function localFunctions(
  sources: EnvironmentSources,
  platform: LocalPlatform,
  maxEnvironments = LOCAL_MAX_ENVIRONMENTS,
): Map<string, LocalFunctionDefinition> {
  const common = platformEnvironment(platform);
  // A handler run on deploy (CloudFormation's) has nothing to run it locally.
  const handlerFunctions = HANDLERS.filter((handler) => !runsOnDeploy(handler)).map(
    (handler): LocalFunctionDefinition => ({
      entry: handler.entry,
      entryFile: handlerEntryPath(handler.entry),
      environment: { ...common, ...accessEnvironment(handler.access, sources, handler.trigger) },
      writes: writtenTables(handler.access),
      timeoutMs: handler.timeoutSeconds * 1000,
      memoryMb: handler.memoryMb ?? DEFAULT_MEMORY_MB,
      maxEnvironments: handlerEnvironments(handler, maxEnvironments),
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
      // A function's reserved concurrency caps it here as on Lambda.
      maxEnvironments: Math.min(maxEnvironments, definition.reservedConcurrency ?? maxEnvironments),
    }),
  );
  return new Map([...handlerFunctions, ...apiFunctions].map((definition) => [definition.entry, definition]));
}

export interface StartFunctionsOptions {
  node: FunctionNode;
  /** Where the bundles are cached between starts. */
  cacheDir: string;
  region: string;
  accountId: string;
  log: (line: string) => void;
  /** Called after an invocation of a function that may write `tables`: their stream readers read at once. */
  wakeReaders: (tables: readonly TableId[]) => void;
}

/** Builds the functions' bundles and starts a local function per definition, by entry. */
export async function startFunctions(
  definitions: ReadonlyMap<string, LocalFunctionDefinition>,
  options: StartFunctionsOptions,
): Promise<Map<string, LocalFunction>> {
  const built = await buildFunctionsCached(
    [...definitions.values()].map((definition) => ({
      name: definition.entry,
      entryFile: definition.entryFile,
      parts: onDemandParts(definition.entry),
    })),
    options.cacheDir,
  );
  const functions = new Map<string, LocalFunction>();
  for (const definition of definitions.values()) {
    const name = `local-${definition.entry}`;
    functions.set(
      definition.entry,
      new LocalFunction({
        name,
        bundle: built.bundles.get(definition.entry) ?? '',
        host: built.host,
        execPath: options.node.execPath,
        environment: definition.environment,
        timeoutMs: definition.timeoutMs,
        memoryMb: definition.memoryMb,
        maxEnvironments: definition.maxEnvironments,
        region: options.region,
        accountId: options.accountId,
        log: (line) => options.log(`[${name}] ${line}`),
        ...(definition.writes.length > 0
          ? { afterInvocation: () => options.wakeReaders(definition.writes) }
          : {}),
      }),
    );
  }
  return functions;
}
