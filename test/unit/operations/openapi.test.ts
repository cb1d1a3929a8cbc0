import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../lambdas/operations/index.ts';
import { buildOpenApiDocument, documentedPathOf } from '../../../lambdas/operations/openapi.ts';

type Operation = {
  security: unknown[];
  requestBody?: {
    required: boolean;
    content: { 'application/json': { schema: { required?: string[]; properties: Record<string, unknown> } } };
  };
  responses: Record<string, { content?: { 'application/json': { schema: Record<string, unknown> } } }>;
};

const document = buildOpenApiDocument(OPERATIONS) as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
};
// API Gateway's greedy `{proxy+}` is documented as `{proxy}` (or as the operation's documentedPath).
const operation = (method: string, path: string) =>
  document.paths[documentedPathOf(method, path, OPERATIONS)]?.[method.toLowerCase()] as Operation;

describe('the OpenAPI document', () => {
  it('describes every operation, and nothing else', () => {
    expect(document.openapi).toBe('3.1.0');
    for (const declared of OPERATIONS) expect(operation(declared.method, declared.path)).toBeDefined();
    const documented = Object.values(document.paths).flatMap((methods) => Object.keys(methods));
    const alsoDocumented = OPERATIONS.flatMap((declared) => declared.alsoDocuments ?? []);
    expect(documented).toHaveLength(OPERATIONS.length + alsoDocumented.length);
  });

  it('asks for a credential exactly where the authorizer does', () => {
    for (const declared of OPERATIONS) {
      const { security } = operation(declared.method, declared.path);
      expect(security.length > 0).toBe(declared.public === undefined);
    }
  });

  it('marks a request body required exactly where the server answers 400 without one', () => {
    expect(operation('POST', '/pipelines').requestBody?.required).toBe(true);
    expect(operation('POST', '/pipelines/{pipelineId}/signals').requestBody?.required).toBe(true);
    expect(operation('POST', '/auth/login').requestBody?.required).toBe(true);
    expect(operation('POST', '/synthesis-runs/{id}/reject').requestBody?.required).toBe(false);
    expect(operation('POST', '/pipelines/{pipelineId}/synthesize').requestBody?.required).toBe(false);
    for (const declared of OPERATIONS) {
      const body = declared.body ?? declared.documentedBody;
      expect(operation(declared.method, declared.path).requestBody?.required).toBe(body?.required);
    }
  });

  it('shows the OTLP endpoint at the path exporters post to, with its bodies and answers in both encodings', () => {
    const otlp = document.paths['/pipelines/{pipelineId}/otlp/v1/traces']?.post as unknown as {
      parameters: Array<{ name: string }>;
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, { content: Record<string, unknown> }>;
    };

    // Not a {signal} parameter, which a generated client would send as v1%2Ftraces.
    expect(Object.keys(document.paths).filter((path) => path.includes('/otlp'))).toEqual([
      '/pipelines/{pipelineId}/otlp/v1/traces',
      '/pipelines/{pipelineId}/otlp/v1/logs',
    ]);
    expect(otlp.parameters.map((parameter) => parameter.name)).toEqual(['pipelineId']);
    expect(Object.keys(otlp.requestBody.content)).toEqual([
      'application/x-protobuf',
      'application/protobuf',
      'application/json',
    ]);
    expect(Object.keys(otlp.responses['200']?.content ?? {})).toEqual([
      'application/x-protobuf',
      'application/json',
    ]);
  });

  it('shows the OTLP logs endpoint with its own bodies and partial success', () => {
    type Documented = {
      operationId: string;
      requestBody?: { content: Record<string, { example?: unknown }> };
      responses: Record<
        string,
        { content?: Record<string, { schema: { properties?: Record<string, { properties?: object }> } }> }
      >;
    };
    const logs = document.paths['/pipelines/{pipelineId}/otlp/v1/logs']?.post as unknown as Documented;

    expect(logs.operationId).toBe('ingest-otlp-logs');
    expect(Object.keys(logs.requestBody?.content ?? {})).toEqual([
      'application/x-protobuf',
      'application/protobuf',
      'application/json',
    ]);
    expect(logs.requestBody?.content['application/json']?.example).toHaveProperty('resourceLogs');
    const answer = logs.responses['200']?.content?.['application/json']?.schema;
    expect(Object.keys(answer?.properties?.partialSuccess?.properties ?? {})).toEqual([
      'rejectedLogRecords',
      'errorMessage',
    ]);
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
    for (const declared of OPERATIONS) {
      if (!declared.body) continue;
      const parsed = declared.body.schema.safeParse(declared.body.example);
      expect(parsed.success, `${declared.name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
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
