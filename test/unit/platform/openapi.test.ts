import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, OPERATION_DOCS } from '../../../lambdas/platform/openapi.ts';
import { ROUTES } from '../../../lambdas/routes.ts';

type Operation = {
  security: unknown[];
  requestBody?: {
    content: { 'application/json': { schema: { required?: string[]; properties: Record<string, unknown> } } };
  };
  responses: Record<string, { content?: { 'application/json': { schema: Record<string, unknown> } } }>;
};

const document = buildOpenApiDocument(ROUTES) as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
};
// API Gateway's greedy `{proxy+}` is documented as `{proxy}`.
const operation = (method: string, path: string) =>
  document.paths[path.replace(/\{(\w+)\+\}/g, '{$1}')]?.[method.toLowerCase()] as Operation;

describe('the OpenAPI document', () => {
  it('describes every route of the route table, and nothing else', () => {
    expect(document.openapi).toBe('3.1.0');
    for (const route of ROUTES) expect(operation(route.method, route.path)).toBeDefined();
    expect(Object.keys(OPERATION_DOCS).sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
  });

  it('asks for a credential exactly where the authorizer does', () => {
    for (const route of ROUTES) {
      const { security } = operation(route.method, route.path);
      expect(security.length > 0).toBe(route.authorized);
    }
  });

  it('documents request bodies from the zod schemas that validate them', () => {
    const create = operation('POST', '/pipelines').requestBody?.content['application/json'].schema;
    expect(create?.required).toEqual(expect.arrayContaining(['name', 'slots']));
    const signals = operation('POST', '/pipelines/{pipelineId}/signals').requestBody?.content[
      'application/json'
    ].schema;
    expect(signals?.properties.signals).toMatchObject({ type: 'array', maxItems: 100 });
  });

  it('documents the run with its statuses and the error body on failures', () => {
    const started = operation('POST', '/pipelines/{pipelineId}/synthesize').responses['202'];
    const run = started?.content?.['application/json'].schema as {
      properties: Record<string, { enum?: string[] }>;
    };
    expect(run.properties.status?.enum).toEqual([
      'pending',
      'generating',
      'generated',
      'approved',
      'rejected',
      'failed',
    ]);
    expect(operation('GET', '/synthesis-runs/{id}').responses['404']).toBeDefined();
    expect(operation('GET', '/synthesis-runs/{id}').responses['401']).toBeDefined();
    expect(operation('POST', '/auth/login').responses['401']).toBeDefined();
    expect(operation('GET', '/openapi.json').responses['401']).toBeUndefined();
  });

  it('shows request examples the API itself accepts', () => {
    for (const [key, doc] of Object.entries(OPERATION_DOCS)) {
      if (!doc.request) continue;
      const parsed = doc.request.schema.safeParse(doc.request.example);
      expect(parsed.success, `${key}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it('documents the query parameters of every list and the Idempotency-Key header', () => {
    type Parameter = { name: string; in: string };
    const parameters = (method: string, path: string) =>
      ((operation(method, path) as Operation & { parameters?: Parameter[] }).parameters ?? []).map(
        (parameter) => `${parameter.in}:${parameter.name}`,
      );
    for (const path of ['/pipelines', '/pipelines/{pipelineId}/activations', '/api-tokens']) {
      expect(parameters('GET', path)).toEqual(expect.arrayContaining(['query:limit', 'query:cursor']));
    }
    expect(parameters('GET', '/pipelines/{pipelineId}/synthesis-runs')).toEqual(
      expect.arrayContaining(['query:status', 'query:limit', 'query:cursor']),
    );
    expect(parameters('POST', '/pipelines/{pipelineId}/synthesize')).toContain('header:Idempotency-Key');
  });
});
