/**
 * The shape of an API operation's declaration: everything about one operation in one object, which
 * its handler is built from (http/operation.ts) and from which the CDK stack (lib/), the local
 * gateway (local/) and the OpenAPI document (openapi.ts) are derived. Pure data and zod schemas:
 * importing a declaration reads no environment and starts no client.
 */
import type * as z from 'zod/mini';
import { DEFAULT_MEMORY_MB, type FunctionAccess, HTTP_FUNCTION_TIMEOUT_SECONDS } from '../functions.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type JsonSchema = Record<string, unknown>;

/** A query or header parameter: the schema that parses its text, and what the document says of it. */
export interface ParameterSpec<S extends z.ZodMiniType = z.ZodMiniType> {
  schema: S;
  description: string;
  /** The 400 message when the value does not parse (zod's issue message otherwise). */
  invalid?: string;
  /** The parameter as documented, when the schema that parses its text is not what a caller sends. */
  documented?: JsonSchema;
}

/** The success answer: its status, and its JSON body's schema (none for 204 or a non-JSON body). */
export interface ResponseSpec {
  status: number;
  /** A zod schema (its output documented) or a JSON Schema written out; absent for no JSON body. */
  schema?: z.ZodMiniType | JsonSchema;
  /** For answers that are not JSON (HTML pages, the application's assets). */
  contentType?: string;
  headers?: Record<string, JsonSchema>;
  /** Other statuses that are no error, with what they mean (a redirect, a 304). */
  alsoAnswers?: Readonly<Record<number, string>>;
  /** The body by media type as documented, for an answer in several encodings (OTLP's). */
  documentedContent?: Readonly<Record<string, JsonSchema>>;
}

export interface OperationDeclaration {
  /**
   * The operation's id in the OpenAPI document, and the name of its function and of its module
   * (lambdas/operations/<name>.ts) unless `module` names another.
   */
  name: string;
  /** The module (and function) serving the operation, when one function serves several operations. */
  module?: string;
  method: HttpMethod;
  /** API Gateway path with `{param}` placeholders; a last `{name+}` takes the rest of the path. */
  path: string;
  /**
   * The path as the document shows it, when the route is greedier than the one path it serves
   * (a generated client would send a greedy parameter's slashes encoded, as %2F).
   */
  documentedPath?: string;
  /**
   * Other paths the same route serves (values of its greedy parameter), each documented as an
   * operation of its own: no more API resources, one function.
   */
  alsoDocuments?: readonly DocumentedRoute[];
  summary: string;
  /** What the function may reach: its grants and environment variables. */
  access: FunctionAccess;
  /**
   * Present only for an operation that goes without a credential: why it may (the reason of its
   * cdk-nag acknowledgements). Every other operation is behind the authorizer.
   */
  public?: string;
  /**
   * `evaluation`: a configuration read a pipeline may make on each of its requests (serving-
   * configuration, OFREP), counted against the team's evaluation rate, not the credential's
   * (lambdas/limits.ts). Exactly the operations that say so: a path merely ending like one is not.
   */
  rateLimit?: 'evaluation';
  memoryMb?: number;
  timeoutSeconds?: number;
  /**
   * Concurrency reserved for the function, which is also the most it runs at once: an operation
   * whose requests may each take much memory and time cannot take the account's whole concurrency.
   */
  reservedConcurrency?: number;
  /**
   * Scripts of this repository that generate what the module imports (run with Node and tsx from
   * the repository root right before the function is bundled), e.g. the review application's build.
   */
  buildsFirst?: readonly string[];
  /** Path parameters: an id outside its schema names no resource (404, no database read). */
  params?: Readonly<Record<string, z.ZodMiniType<string>>>;
  query?: Readonly<Record<string, ParameterSpec>>;
  /** Request headers by their lower-case name. */
  headers?: Readonly<Record<string, ParameterSpec>>;
  /** The JSON body: `required` says whether an absent body is a 400 (else it reads as `{}`). */
  body?: { schema: z.ZodMiniType; required: boolean; example: Record<string, unknown> };
  /** The body as documented by media type, for a body the handler decodes itself (OTLP's). */
  documentedBody?: {
    required: boolean;
    content: Readonly<Record<string, { schema: JsonSchema; example: unknown }>>;
  };
  response: ResponseSpec;
  /** Error statuses besides 400, 413, 429, 500 and (behind the authorizer) 401 and 403. */
  errors: readonly number[];
  /**
   * Error answers in a protocol's own shape (OFREP's), by status, documented in place of the API's
   * `{error, message}`; the module's handler answers them so.
   */
  errorBodies?: Readonly<Record<number, ErrorBodySpec>>;
}

/** A path a greedy route also serves, as the document shows it (the rest is the operation's). */
export interface DocumentedRoute {
  name: string;
  documentedPath: string;
  summary: string;
  documentedBody?: OperationDeclaration['documentedBody'];
  response?: ResponseSpec;
}

export interface ErrorBodySpec {
  description: string;
  schema: JsonSchema;
  example: Record<string, unknown>;
}

/** Identity with the literal types kept, so the handler is typed from exactly this declaration. */
export function defineOperation<const D extends OperationDeclaration>(declaration: D): D {
  return declaration;
}

/** The module (and function, and entry) that serves an operation. */
export function moduleOf(operation: Pick<OperationDeclaration, 'name' | 'module'>): string {
  return operation.module ?? operation.name;
}

/**
 * The statuses an operation may answer: its success, its declared errors and the ones any may: a
 * bad request 400, a body too large 413, 429 (the web ACL's rate rules and the stage's throttle
 * reach every route), 500, and behind the authorizer its 401 and 403.
 */
export function answerableStatuses(operation: OperationDeclaration): number[] {
  const always = [400, 413, 429, 500, ...(operation.public === undefined ? [401, 403] : [])];
  const other = Object.keys(operation.response.alsoAnswers ?? {}).map(Number);
  return [...new Set([operation.response.status, ...other, ...always, ...operation.errors])];
}

/** The paths of the operations counted against the team's evaluation rate (`rateLimit: 'evaluation'`). */
export function evaluationPaths(operations: readonly OperationDeclaration[]): string[] {
  return operations.filter((operation) => operation.rateLimit === 'evaluation').map((o) => o.path);
}

/** What the function of an operation runs with where the declaration says nothing. */
export function functionSettings(operation: OperationDeclaration) {
  return {
    memoryMb: operation.memoryMb ?? DEFAULT_MEMORY_MB,
    timeoutSeconds: operation.timeoutSeconds ?? HTTP_FUNCTION_TIMEOUT_SECONDS,
    /** Null: the function draws on the account's unreserved concurrency, without a cap of its own. */
    reservedConcurrency: operation.reservedConcurrency ?? null,
  };
}
