/**
 * The Lambda REQUEST authorizer's answer, read the way API Gateway reads it: the result's shape,
 * then IAM evaluation of its policy for `execute-api:Invoke` on the method ARN, then the context
 * values the integration receives.
 */
import { z } from 'zod';

const stringOrList = z.union([z.string(), z.array(z.string())]);
const statementSchema = z.object({
  Effect: z.enum(['Allow', 'Deny']),
  Action: stringOrList.optional(),
  NotAction: stringOrList.optional(),
  Resource: stringOrList.optional(),
  NotResource: stringOrList.optional(),
});
const authorizerResultSchema = z.object({
  principalId: z.string(),
  policyDocument: z.object({
    Version: z.string().optional(),
    Statement: z.union([statementSchema, z.array(statementSchema)]),
  }),
  // API Gateway refuses objects and arrays in the context; only scalars reach the handler.
  context: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullish(),
  usageIdentifierKey: z.string().nullish(),
});
type PolicyStatement = z.infer<typeof statementSchema>;

/** Compiled patterns by flags and text: an authorizer answers the same few policies again and again. */
const compiledPatterns = new Map<string, RegExp>();

function wildcardPattern(pattern: string, flags: string): RegExp {
  const key = `${flags}:${pattern}`;
  let compiled = compiledPatterns.get(key);
  if (compiled === undefined) {
    compiled = compileWildcard(pattern, flags);
    // Bounded: a policy per resource (an ARN per path) must not grow the map without end.
    if (compiledPatterns.size >= 1_000) compiledPatterns.clear();
    compiledPatterns.set(key, compiled);
  }
  return compiled;
}

function compileWildcard(pattern: string, flags: string): RegExp {
  const source = [...pattern]
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, flags);
}

function matches(pattern: string, value: string, flags: string): boolean {
  // Without a wildcard, a pattern matches only itself: no expression to build (the common case:
  // the authorizer allows exactly the method ARN it was asked about).
  if (!pattern.includes('*') && !pattern.includes('?'))
    return flags === 'i' ? pattern.toLowerCase() === value.toLowerCase() : pattern === value;
  return wildcardPattern(pattern, flags).test(value);
}

function matchesAny(patterns: string | string[], value: string, flags: string): boolean {
  return (Array.isArray(patterns) ? patterns : [patterns]).some((pattern) => matches(pattern, value, flags));
}

function statementApplies(statement: PolicyStatement, methodArn: string): boolean {
  // IAM matches actions case-insensitively and resources case-sensitively.
  const action =
    statement.Action !== undefined
      ? matchesAny(statement.Action, 'execute-api:Invoke', 'i')
      : statement.NotAction !== undefined && !matchesAny(statement.NotAction, 'execute-api:Invoke', 'i');
  const resource =
    statement.Resource !== undefined
      ? matchesAny(statement.Resource, methodArn, '')
      : statement.NotResource !== undefined && !matchesAny(statement.NotResource, methodArn, '');
  return action && resource;
}

/** IAM evaluation for one action and resource: an explicit Deny wins, otherwise an Allow is needed. */
function policyAllows(statements: PolicyStatement | PolicyStatement[], methodArn: string): boolean {
  const applicable = (Array.isArray(statements) ? statements : [statements]).filter((statement) =>
    statementApplies(statement, methodArn),
  );
  if (applicable.some((statement) => statement.Effect === 'Deny')) return false;
  return applicable.some((statement) => statement.Effect === 'Allow');
}

export type AuthorizerVerdict =
  | { outcome: 'allow'; context: Record<string, string> }
  | { outcome: 'deny'; context: Record<string, string> }
  | { outcome: 'malformed' };

/** What API Gateway makes of an authorizer's result for `methodArn`. */
export function readAuthorizerResult(result: unknown, methodArn: string): AuthorizerVerdict {
  const parsed = authorizerResultSchema.safeParse(result);
  if (!parsed.success) return { outcome: 'malformed' };
  // The Lambda proxy integration (and a Deny's gateway response) receives every value as a string.
  const context: Record<string, string> = Object.create(null);
  for (const [key, value] of Object.entries(parsed.data.context ?? {})) context[key] = String(value);
  context.principalId = parsed.data.principalId;
  if (!policyAllows(parsed.data.policyDocument.Statement, methodArn)) return { outcome: 'deny', context };
  return { outcome: 'allow', context };
}
