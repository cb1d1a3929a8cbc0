/**
 * The API's functions: the operations grouped by the module that serves them (one Lambda function
 * each). Operations that share a module must ask for the same access and settings: a function has
 * one role, one memory size and one timeout.
 */
import type { FunctionAccess } from '../functions.ts';
import { functionSettings, moduleOf, type OperationDeclaration } from './declaration.ts';

export interface OperationFunction {
  /** The module in lambdas/operations/ and the function's name. */
  module: string;
  operations: OperationDeclaration[];
  access: FunctionAccess;
  memoryMb: number;
  timeoutSeconds: number;
  reservedConcurrency: number | null;
  buildsFirst: readonly string[];
}

const settingsKey = (operation: OperationDeclaration) =>
  JSON.stringify([operation.access, functionSettings(operation), operation.buildsFirst ?? []]);

export function operationFunctions(operations: readonly OperationDeclaration[]): OperationFunction[] {
  const byModule = new Map<string, OperationFunction>();
  for (const operation of operations) {
    const module = moduleOf(operation);
    const existing = byModule.get(module);
    if (existing) {
      const [first] = existing.operations;
      if (first && settingsKey(first) !== settingsKey(operation)) {
        throw new Error(
          `Operations ${first.name} and ${operation.name} share the module '${module}' but not its access or settings.`,
        );
      }
      existing.operations.push(operation);
      continue;
    }
    byModule.set(module, {
      module,
      operations: [operation],
      access: operation.access,
      ...functionSettings(operation),
      buildsFirst: operation.buildsFirst ?? [],
    });
  }
  return [...byModule.values()];
}
