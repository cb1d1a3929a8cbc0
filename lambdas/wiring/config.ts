/*
 * Reads and checks a Lambda's environment variables at cold start, so a missing setting
 * fails loudly at once; and the table-name setting every store shares.
 */
import * as z from 'zod/mini';

/**
 * Reads and validates environment variables once, at module load, so a Lambda with a missing
 * setting fails its first invocation loudly instead of misbehaving later.
 */
export function readConfig<T extends z.core.$ZodShape>(shape: T): z.infer<z.ZodMiniObject<T>> {
  const result = z.object(shape).safeParse(process.env);
  if (!result.success) {
    const names = result.error.issues.map((issue) => issue.path.join('.')).join(', ');
    throw new Error(`Missing or invalid environment variables: ${names}`);
  }
  return result.data;
}

export const tableName = z.string().check(z.minLength(1));

/** The variable of the authorizer's evaluation routes (FunctionAccess `namesUsageKeys`): a JSON array of path templates. */
export const EVALUATION_ROUTES_VARIABLE = 'EVALUATION_ROUTES';

/** The path templates of the evaluation routes, from EVALUATION_ROUTES; fails fast when it is missing or not a list. */
export function evaluationRoutesFromEnv(): string[] {
  const raw = readConfig({ [EVALUATION_ROUTES_VARIABLE]: z.string() })[EVALUATION_ROUTES_VARIABLE];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new Error(`${EVALUATION_ROUTES_VARIABLE} must be a JSON array of path templates.`, {
      cause: error,
    });
  }
  const routes = z.array(z.string()).safeParse(parsed);
  if (!routes.success)
    throw new Error(`${EVALUATION_ROUTES_VARIABLE} must be a JSON array of path templates.`);
  return routes.data;
}

/**
 * The variable of the authorizer's shared evaluation key (FunctionAccess `namesUsageKeys`): the
 * value of the stack's one fallback API key on the evaluation plan (lib/api.ts), named for a team
 * that has no key of its own yet. Not a secret: with the authorizer as the key source, no request
 * can present a key.
 */
export const EVALUATION_FALLBACK_KEY_VARIABLE = 'EVALUATION_FALLBACK_KEY';

/** The shared evaluation key's value, from EVALUATION_FALLBACK_KEY; fails fast when it is missing. */
export function evaluationFallbackKeyFromEnv(): string {
  return readConfig({ [EVALUATION_FALLBACK_KEY_VARIABLE]: z.string().check(z.minLength(20)) })[
    EVALUATION_FALLBACK_KEY_VARIABLE
  ];
}
