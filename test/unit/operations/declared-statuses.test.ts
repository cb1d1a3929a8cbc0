/*
 * The OpenAPI document states what the server enforces: every status an operation can answer is
 * declared (walked over every declaration), and the constraints a generated client validates are
 * the ones the handlers check.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TOKEN_LIMITS } from '../../../lambdas/auth/api-token.ts';
import {
  answerableStatuses,
  moduleOf,
  type OperationDeclaration,
} from '../../../lambdas/operations/declaration.ts';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { buildOpenApiDocument, documentedPathOf } from '../../../lambdas/operations/openapi.ts';
import { MAX_WEBHOOKS_PER_TEAM } from '../../../lambdas/webhooks/webhooks.ts';
import { GATEWAY_ERRORS, RATE_LIMITED_BODY } from '../../../lib/gateway-errors.ts';

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

/** The gateway responses API Gateway gives on a route it matched, whoever calls (lib/gateway-errors.ts). */
const ON_EVERY_ROUTE = ['THROTTLED', 'REQUEST_TOO_LARGE', 'BAD_REQUEST_BODY', 'BAD_REQUEST_PARAMETERS'];
/** Those of the authorizer, on the routes behind it. */
const OF_THE_AUTHORIZER = ['UNAUTHORIZED', 'ACCESS_DENIED'];

/**
 * Every status the server can answer for an operation, gathered from where each comes from rather
 * than from the declaration's own list: API Gateway's responses, the web ACL (its 429 on every
 * route: per credential on any request that carries one, per client IP on /auth/*), the shared
 * parsing and error mapping of http/ (a bad body, query or header 400, a body over 1 MB 413, a
 * path id that is no id 404, anything unforeseen 500), the CSRF rule a handler applies (403), and
 * what the declaration says its use case answers.
 */
function answeredStatuses(declared: OperationDeclaration): Set<number> {
  const gateway = GATEWAY_ERRORS.filter(
    (response) =>
      ON_EVERY_ROUTE.includes(response.type) ||
      (declared.public === undefined && OF_THE_AUTHORIZER.includes(response.type)),
  ).map((response) => Number(response.statusCode));
  const webAcl = RATE_LIMITED_BODY.error === 'RATE_LIMITED' ? [429] : [];
  const parsing = [400, 413, 500, ...(Object.keys(declared.params ?? {}).length > 0 ? [404] : [])];
  const source = readFileSync(
    new URL(`../../../lambdas/operations/${moduleOf(declared)}.ts`, import.meta.url),
    'utf8',
  );
  const csrf = source.includes('assertCsrfSafe(') ? [403] : [];
  const own = [declared.response.status, ...Object.keys(declared.response.alsoAnswers ?? {}).map(Number)];
  return new Set([...gateway, ...webAcl, ...parsing, ...csrf, ...own, ...declared.errors]);
}

describe('every operation', () => {
  it.each(OPERATIONS.map((declared) => [`${declared.method} ${declared.path}`, declared] as const))(
    '%s declares each status the server can answer for it',
    (_, declared) => {
      const documented = Object.keys(operation(declared.method, declared.path).responses).map(Number);
      const answered = answeredStatuses(declared);

      expect([...answered].filter((status) => !documented.includes(status))).toEqual([]);
      // The handler answers an undeclared status as a 500 (http/operation.ts): it must know them all.
      expect([...answered].filter((status) => !answerableStatuses(declared).includes(status))).toEqual([]);
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

  it('state the rules every handler enforces, where a client reads them', () => {
    const bodyText = (method: string, path: string) => JSON.stringify(operation(method, path).requestBody);
    for (const declared of OPERATIONS.filter((each) => each.body !== undefined)) {
      const text = bodyText(declared.method, declared.path);
      for (const rule of [
        'NUL',
        'unpaired UTF-16 surrogate',
        '1e-130 to below 1e126',
        'no empty key',
        '24 levels',
      ])
        expect(text, `${declared.name}: ${rule}`).toContain(rule);
    }
    const signals = bodyText('POST', '/pipelines/{pipelineId}/signals');
    const executions = bodyText('POST', '/pipelines/{pipelineId}/executions');
    for (const text of [signals, executions])
      expect(text).toContain('from 2000-01-01 to at most 24 hours after the server');
    expect(signals).toContain('an id given appears once in the batch');
    expect(executions).toContain('an id given appears once in the batch');
    expect(bodyText('POST', '/pipelines')).toContain('each slot id appears once');
    expect(bodyText('POST', '/synthesis-runs/{id}/evaluations')).toContain(
      'each (executionId, arm) appears once',
    );
    expect(bodyProperty('POST', '/me/password', 'newPassword')).toMatchObject({
      minLength: 12,
      maxLength: 128,
    });
    const summary = (method: string, path: string) =>
      (operation(method, path) as unknown as { summary: string }).summary;
    expect(summary('POST', '/webhooks')).toContain(`At most ${MAX_WEBHOOKS_PER_TEAM} a team`);
    expect(summary('POST', '/api-tokens')).toContain(
      `At most ${API_TOKEN_LIMITS.perPerson} tokens a person (across their teams) and ${API_TOKEN_LIMITS.perTeam} a team`,
    );
  });

  it('give examples a caller could use: a webhook host that resolves', () => {
    const example = JSON.stringify(operation('POST', '/webhooks').requestBody);
    expect(example).toContain('https://example.com/');
    expect(example).not.toMatch(/hooks\.example\.com/);
  });
});
