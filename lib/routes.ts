/**
 * The API operations' functions, one per operation module (lambdas/operations/functions.ts), in
 * nested stacks by route group so no template nears CloudFormation's resource limit: the functions
 * of the operations under /pipelines, and the others. A module's group follows from its paths
 * alone, so adding an operation never moves another's function.
 */
import { Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { OperationFunction } from '../lambdas/operations/functions.ts';
import { buildScriptCommand, onDemandParts, operationEntryPath } from './bundling.ts';
import { pascalCase } from './names.ts';
import { type FunctionSettings, type GrantableResources, ServiceFunction } from './service-function.ts';

/** The nested stacks of operation functions, by the id of each. */
export const ROUTE_GROUPS = ['PipelineRoutes', 'Routes'] as const;
export type RouteGroup = (typeof ROUTE_GROUPS)[number];

/** The group of the operations whose paths begin with a segment; all others are in `Routes`. */
const GROUP_OF_FIRST_SEGMENT: Readonly<Record<string, RouteGroup>> = { pipelines: 'PipelineRoutes' };

/** The group of an operation module's function: that of its operations' first path segment. */
export function routeGroupOf(fn: Pick<OperationFunction, 'operations'>): RouteGroup {
  const groups = new Set(
    fn.operations.map((operation) => GROUP_OF_FIRST_SEGMENT[operation.path.split('/')[1] ?? ''] ?? 'Routes'),
  );
  const [group] = groups;
  return groups.size === 1 && group !== undefined ? group : 'Routes';
}

export interface RouteFunctionsProps {
  readonly functions: readonly OperationFunction[];
  readonly resources: GrantableResources;
  readonly settings: FunctionSettings;
}

/** One function per operation module: its access, memory, timeout and build steps. */
export class RouteFunctions extends Construct {
  /** The functions by module name. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, id: string, props: RouteFunctionsProps) {
    super(scope, id);
    this.functions = new Map(
      props.functions.map((definition) => [
        definition.module,
        new ServiceFunction(this, pascalCase(definition.module), {
          entryFile: operationEntryPath(definition.module),
          access: definition.access,
          resources: props.resources,
          settings: props.settings,
          description: definition.operations
            .map((operation) => `${operation.method} ${operation.path}`)
            .join(', '),
          memorySize: definition.memoryMb,
          timeout: Duration.seconds(definition.timeoutSeconds),
          ...(definition.reservedConcurrency === null
            ? {}
            : { reservedConcurrentExecutions: definition.reservedConcurrency }),
          beforeBundling: definition.buildsFirst.map(buildScriptCommand),
          onDemandParts: onDemandParts(definition.module),
        }),
      ]),
    );
  }
}
