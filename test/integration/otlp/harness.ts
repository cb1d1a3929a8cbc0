/*
 * The OTLP ingest's handler on DynamoDB Local, called as API Gateway calls it (binary media types:
 * the body base64), with the answer decoded in the encoding it came in; and what it recorded.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll } from 'vitest';
import { makePipelineRepository } from '../../../lambdas/store/pipelines.ts';
import type { TableNames } from '../../../local/dynamodb.ts';
import { DEMO_SLOTS } from '../../../local/seed.ts';
import { gzip } from '../../support/otlp-requests.ts';
import {
  apiEvent,
  type Caller,
  createCaller,
  type HttpLambda,
  invoke,
  lambdaContext,
  loadHandlers,
  setUpApiEnvironment,
} from '../api/harness.ts';

export let admin: Caller;
export let http: Record<string, HttpLambda>;
export let db: DynamoDBDocumentClient;
export let names: TableNames;

beforeAll(async () => {
  ({ db, names } = await setUpApiEnvironment());
  admin = await createCaller(db, names);
  http = await loadHandlers([
    'create-pipeline',
    'ingest-otlp-traces',
    'record-executions',
    'list-executions',
    'get-execution',
    'list-signals',
    'export-pipeline',
  ]);
});

export async function newPipeline() {
  const created = await invoke(
    http['create-pipeline'] as HttpLambda,
    apiEvent({
      method: 'POST',
      resource: '/pipelines',
      body: { name: 'otel bot', slots: DEMO_SLOTS },
      principal: admin.principal,
    }),
  );
  return created.body as { id: string; activeConfigurationId: string };
}

interface Sent {
  contentType?: string;
  /** Sent with Content-Encoding: gzip (the body gzipped here unless `raw`). */
  gzip?: boolean;
  raw?: boolean;
}

/** Posts a body as an OTLP exporter does, through API Gateway's binary media handling (base64). */
export async function post(
  pipelineId: string,
  body: Buffer,
  { contentType = 'application/x-protobuf', gzip: zipped, raw }: Sent = {},
) {
  const event: APIGatewayProxyEvent = {
    ...apiEvent({
      method: 'POST',
      resource: '/pipelines/{pipelineId}/otlp/{signal+}',
      pathParameters: { pipelineId, signal: 'v1/traces' },
      principal: admin.principal,
      headers: { 'content-type': contentType, ...(zipped ? { 'content-encoding': 'gzip' } : {}) },
    }),
    body: (zipped && !raw ? gzip(body) : body).toString('base64'),
    isBase64Encoded: true,
  };
  const result = await (http['ingest-otlp-traces'] as HttpLambda)(event, lambdaContext());
  const bytes = Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const type = String(result.headers?.['content-type'] ?? '');
  const answer: Record<string, unknown> =
    type === 'application/x-protobuf'
      ? // The official exporter's own reading of the answer.
        (ProtobufTraceSerializer.deserializeResponse(bytes) as Record<string, unknown>)
      : (JSON.parse(bytes.toString('utf8') || '{}') as Record<string, unknown>);
  return { status: result.statusCode, type, answer };
}

export const repository = () => makePipelineRepository(db, names.Data);
export const executionsOf = (pipelineId: string) =>
  repository().recentExecutions(pipelineId, 100, '2000-01-01T00:00:00.000Z');
export const signalsOf = (pipelineId: string) =>
  repository().recentSignals(pipelineId, 100, '2000-01-01T00:00:00.000Z');
