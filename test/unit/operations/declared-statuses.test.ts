/*
 * The OpenAPI document states what the server enforces: every status an operation can answer is
 * declared (walked over every declaration), and the constraints a generated client validates are
 * the ones the handlers check.
 */
import { describe, expect, it } from 'vitest';
import { answerableStatuses } from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { buildOpenApiDocument, documentedPathOf } from '../../../lambdas/operations/openapi.ts';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema };
type Operation = {
  parameters?: Array<{ name: string; in: string; schema: Schema }>;
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, unknown>;
};

const document = buildOpenApiDocument(OPERATIONS) as { paths: Record<string, Record<string, Operation>> };
const operation = (method: string, path: string) =>
  document.paths[documentedPathOf(method, path, OPERATIONS)]?.[method.toLowerCase()] as Operation;
const bodyProperty = (method: string, path: string, name: string) =>
  operation(method, path).requestBody?.content['application/json'].schema.properties?.[name];

describe('every operation', () => {
  it.each(OPERATIONS.map((declared) => [`${declared.method} ${declared.path}`, declared] as const))(
    '%s declares each status its handler can answer',
    (_, declared) => {
      const documented = Object.keys(operation(declared.method, declared.path).responses).map(Number);
      const answerable = new Set(answerableStatuses(declared));
      // A path id that is not an id is a 404 before any read (http/parse.ts).
      if (Object.keys(declared.params ?? {}).length > 0) expect(answerable).toContain(404);
      // Query parameters, headers and bodies are parsed: a bad one is a 400.
      expect(answerable).toContain(400);
      for (const status of answerable) expect(documented).toContain(status);
    },
  );

  it('refuses an empty cursor, as the document says', () => {
    const cursors = OPERATIONS.flatMap((declared) =>
      (operation(declared.method, declared.path).parameters ?? []).filter((p) => p.name === 'cursor'),
    );
    expect(cursors.length).toBeGreaterThanOrEqual(7);
    for (const cursor of cursors) expect(cursor.schema).toMatchObject({ type: 'string', minLength: 1 });
  });
});

describe('the constraints a generated client validates', () => {
  it('are the ones the handlers enforce', () => {
    expect(bodyProperty('POST', '/pipelines/{pipelineId}/synthesize', 'synthesisHandler')).toMatchObject({
      enum: ['heuristic-v1', 'claude-v1'],
    });
    expect(bodyProperty('POST', '/me/password', 'newPassword')).toMatchObject({ minLength: 12 });
    expect(bodyProperty('POST', '/synthesis-runs/{id}/approve', 'changeIds')).toMatchObject({
      uniqueItems: true,
    });
    expect(bodyProperty('POST', '/webhooks', 'url')).toMatchObject({ format: 'uri', pattern: '^https://' });
  });

  it('give examples a caller could use: a webhook host that resolves', () => {
    const example = JSON.stringify(operation('POST', '/webhooks').requestBody);
    expect(example).toContain('https://example.com/');
    expect(example).not.toMatch(/hooks\.example\.com/);
  });
});
