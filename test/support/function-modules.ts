/**
 * Where a function's module lives: an API operation's in lambdas/operations/, the other functions'
 * (authorizer, worker, dead letters, sweeper) in lambdas/handlers/. Tests import them by name.
 */
import { existsSync } from 'node:fs';
import { handlerEntryPath, operationEntryPath } from '../../lib/bundling.ts';

/** The module of the function named `entry`, for `await import(...)`. */
export function functionModulePath(entry: string): string {
  const operation = operationEntryPath(entry);
  return existsSync(operation) ? operation : handlerEntryPath(entry);
}

/** The `handler` export of the function named `entry`. */
export async function importHandler<T = unknown>(entry: string): Promise<T> {
  return (await import(functionModulePath(entry))).handler as T;
}
