/* POST /pipelines/{pipelineId}/otlp/v1/traces: OTLP/HTTP traces become executions and signals. */
import * as z from 'zod/mini';
import { ServiceUnavailableError } from '../core/errors.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeIngestTraces } from '../core/use-cases/ingest-traces.ts';
import { makeRecordExecutions, makeRecordSignals } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { bodyOf, decodeRequest, encodingOf, exportResponse } from '../otlp/http.ts';
import { guardrailsFromEnv } from '../sqs/guardrail-sender.ts';
import { redactText } from '../synthesis/redact.ts';
import { nanoidGenerator, systemClock } from '../wiring/clock.ts';
import { readOnce } from '../wiring/read-once.ts';
import {
  pipelineRepositoryFromEnv,
  teamSettingsStoreFromEnv,
  traceStagingFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

const binary = (what: string) => ({ type: 'string', format: 'binary', description: what });
const partialSuccess = {
  type: 'object',
  description: 'Present when spans were refused (the rest is stored): how many, and why.',
  properties: {
    rejectedSpans: { type: ['integer', 'string'], description: 'int64 (OTLP/JSON may write it as text)' },
    errorMessage: { type: 'string' },
  },
};

const OTLP_JSON_SPAN = {
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: 'eee19b7ec3c1b174',
  name: 'answer-question',
  startTimeUnixNano: '1764547200000000000',
  endTimeUnixNano: '1764547200900000000',
  attributes: [{ key: 'input.value', value: { stringValue: '{"question":"what is our refund policy?"}' } }],
};

export const ingestOtlpTraces = defineOperation({
  name: 'ingest-otlp-traces',
  method: 'POST',
  // One greedy resource under /otlp (v1/traces is its only value): the deep path would cost the
  // API's template two resources more than any other operation. The document shows the one path.
  path: '/pipelines/{pipelineId}/otlp/{signal+}',
  documentedPath: '/pipelines/{pipelineId}/otlp/v1/traces',
  summary:
    'OTLP/HTTP (protobuf or JSON, gzip allowed): traces become executions and signals. Limits: docs/opentelemetry.md.',
  access: { data: 'readWrite', send: ['guardrail-checks'] },
  // The largest accepted request (32 MB inflated, 2,000,000 values) decodes in under 200 MB of heap
  // and about 2.5 s of one core here: 1,536 MB (0.87 of a vCPU on Lambda) keeps it a few seconds
  // within the 10 s timeout. At most 20 at once, so a flood cannot take the account's concurrency.
  memoryMb: 1536,
  reservedConcurrency: 20,
  params: { pipelineId: idSchema, signal: z.string().check(z.regex(/^v1\/traces$/)) },
  documentedBody: {
    required: true,
    content: {
      'application/x-protobuf': {
        schema: binary('An OTLP ExportTraceServiceRequest in protobuf (gzip with Content-Encoding: gzip).'),
        example: '(the protobuf bytes an OTLP exporter writes)',
      },
      'application/protobuf': {
        schema: binary('The same, under the other protobuf media type.'),
        example: '(the protobuf bytes an OTLP exporter writes)',
      },
      'application/json': {
        schema: {
          type: 'object',
          description: 'An OTLP/JSON ExportTraceServiceRequest: trace and span ids in hex.',
          properties: { resourceSpans: { type: 'array', items: { type: 'object' } } },
        },
        example: { resourceSpans: [{ scopeSpans: [{ spans: [OTLP_JSON_SPAN] }] }] },
      },
    },
  },
  response: {
    status: 200,
    contentType: 'application/x-protobuf',
    documentedContent: {
      'application/x-protobuf': binary('An ExportTraceServiceResponse in protobuf (to a protobuf request).'),
      'application/json': {
        type: 'object',
        description: 'An ExportTraceServiceResponse in OTLP/JSON (to a JSON request).',
        properties: { partialSuccess },
      },
    },
  },
  // 503 when the store is throttled (with Retry-After: OTLP exporters send the batch again).
  errors: [404, 409, 429, 503],
});

/** DynamoDB's throttling: retryable, so OTLP exporters send the batch again. */
const THROTTLED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
]);

export const handler = /* @__PURE__ */ operationHandler(ingestOtlpTraces, () => {
  const stored = { pipelines: pipelineRepositoryFromEnv(), settings: teamSettingsStoreFromEnv() };
  const staging = traceStagingFromEnv();
  const guardrails = guardrailsFromEnv();
  // Built for each request: its pipeline and team settings are read once for all it records.
  const ingestFor = () => {
    const { pipelines, settings } = readOnce(stored.pipelines, stored.settings);
    const record = { pipelines, clock: systemClock, ids: nanoidGenerator, settings };
    return makeIngestTraces({
      pipelines,
      settings,
      traces: staging.traces,
      clock: systemClock,
      recordSignals: makeRecordSignals({ ...record, guardrails }),
      recordExecutions: makeRecordExecutions({ ...record, guardrails }),
      reviseExecution: staging.reviseExecution,
      redact: redactText,
    });
  };
  return async ({ principal, params, event }) => {
    const encoding = encodingOf(event);
    const decoded = decodeRequest(bodyOf(event), encoding);
    try {
      await ingestFor()(principal, params.pipelineId, decoded, decoded);
    } catch (error) {
      if (error instanceof Error && THROTTLED.has(error.name)) {
        throw new ServiceUnavailableError('The store is busy: send the batch again after Retry-After.', {
          cause: error,
        });
      }
      throw error;
    }
    return { raw: exportResponse(encoding, decoded.rejected, decoded.reasons) };
  };
});
