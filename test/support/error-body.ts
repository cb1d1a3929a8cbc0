/** What an error answer's body must hold: the API's `{error, message}` (the gateway's own answers,
 * e.g. no such route, included), or the protocol's own shape an operation declares for that status
 * (OFREP's `{key, errorCode, errorDetails}`). */
import { OPERATIONS } from '../../lambdas/operations/index.ts';

const isText = (value: unknown) => typeof value === 'string';

export function isExpectedErrorBody(method: string, path: string, status: number, body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const fields = body as Record<string, unknown>;
  if (isText(fields.error) && isText(fields.message)) return true;
  const operation = OPERATIONS.find((candidate) => candidate.method === method && candidate.path === path);
  const declared = operation?.errorBodies?.[status];
  return (
    declared !== undefined &&
    ((declared.schema.required ?? []) as string[]).every((name) => isText(fields[name]))
  );
}
