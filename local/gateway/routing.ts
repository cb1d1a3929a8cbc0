/**
 * Route matching as API Gateway does it: the most specific resource for the path (a literal
 * segment beats a `{parameter}`, a resource without a greedy `{name+}` beats one with it), then
 * its method. Path parameters arrive URL-decoded.
 */

/**
 * What the gateway reads of a route, and all it reads: the list of operations is passed in as
 * objects of this shape, so the gateway does not depend on how they are declared.
 */
export interface GatewayRoute {
  readonly method: string;
  /** API Gateway path with `{param}` placeholders; a last `{name+}` takes the rest of the path. */
  readonly path: string;
  /** The function that serves the route, as the `invoke` of the gateway names it. */
  readonly entry: string;
  /** false: the route is public, and the authorizer does not run. */
  readonly authorized: boolean;
}

interface CompiledResource {
  path: string;
  segments: Array<{ literal: string } | { parameter: string }>;
  /** A last `{name+}` segment: API Gateway's greedy parameter takes one or more segments. */
  greedy?: string;
  methods: Map<string, GatewayRoute>;
}

export interface ResourceMatch {
  route: GatewayRoute | undefined;
  pathParameters: Record<string, string>;
}

/** A path whose parameter is not valid percent-encoding: API Gateway's 400. */
export class MalformedPathError extends Error {}

function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/$/, '');
  return trimmed.length === 0 ? [] : trimmed.split('/');
}

function decode(segment: string, path: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new MalformedPathError(path);
  }
}

/** A literal segment beats a parameter at the first position where the two differ. */
function moreSpecific(candidate: CompiledResource, current: CompiledResource): boolean {
  if (!candidate.greedy !== !current.greedy) return !candidate.greedy;
  for (const [index, segment] of candidate.segments.entries()) {
    const other = current.segments[index];
    if (other === undefined) return false;
    if ('literal' in segment !== 'literal' in other) return 'literal' in segment;
  }
  return false;
}

/** A resource path split into segments, its greedy parameter (if any) kept apart; no methods yet. */
function compileResource(path: string): CompiledResource {
  const segments = splitPath(path).map((segment): CompiledResource['segments'][number] => {
    const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
    return parameter === undefined ? { literal: segment } : { parameter };
  });
  const last = segments.at(-1);
  const greedy = last && 'parameter' in last && last.parameter.endsWith('+') ? last.parameter : undefined;
  if (greedy !== undefined) segments.pop();
  return { path, segments, ...(greedy ? { greedy } : {}), methods: new Map() };
}

export class RouteTable {
  private readonly resources: CompiledResource[];

  constructor(routes: readonly GatewayRoute[]) {
    const byPath = new Map<string, CompiledResource>();
    for (const route of routes) {
      let resource = byPath.get(route.path);
      if (resource === undefined) {
        resource = compileResource(route.path);
        byPath.set(route.path, resource);
      }
      if (resource.methods.has(route.method))
        throw new Error(`Route ${route.method} ${route.path} is defined twice`);
      resource.methods.set(route.method, route);
    }
    this.resources = [...byPath.values()];
  }

  /** The route for `method` on `path`; undefined when no resource fits (route undefined: no such method). */
  match(method: string, path: string): ResourceMatch | undefined {
    const segments = splitPath(path);
    let best: CompiledResource | undefined;
    for (const resource of this.resources) {
      const lengthFits = resource.greedy
        ? segments.length > resource.segments.length
        : segments.length === resource.segments.length;
      if (!lengthFits) continue;
      const fits = resource.segments.every((segment, index) =>
        'literal' in segment ? segment.literal === segments[index] : segments[index] !== '',
      );
      if (fits && (best === undefined || moreSpecific(resource, best))) best = resource;
    }
    if (best === undefined) return undefined;
    const pathParameters: Record<string, string> = {};
    for (const [index, segment] of best.segments.entries()) {
      if ('parameter' in segment) pathParameters[segment.parameter] = decode(segments[index] ?? '', path);
    }
    // API Gateway names the greedy parameter without the `+` and passes the rest of the path.
    if (best.greedy)
      pathParameters[best.greedy.slice(0, -1)] = decode(segments.slice(best.segments.length).join('/'), path);
    return { route: best.methods.get(method), pathParameters };
  }
}
