/*
 * POST /pipelines/{pipelineId}/otlp/v1/traces and …/v1/logs: OTLP/HTTP traces become executions and
 * signals, log records that are evaluation results become signals; …/v1/metrics is refused (404).
 */
import * as z from 'zod/mini';
import { NotFoundError, ServiceUnavailableError } from '../core/errors.ts';
import { idSchema } from '../core/schemas/common.ts';
import { makeIngestLogs } from '../core/use-cases/ingest-logs.ts';
import { makeIngestTraces } from '../core/use-cases/ingest-traces.ts';
import { makeRecordExecutions, makeRecordSignals } from '../core/use-cases/pipelines.ts';
import { operationHandler } from '../http/operation.ts';
import { bodyOf, decodeLogsRequest, decodeRequest, encodingOf, exportResponse } from '../otlp/http.ts';
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
const partialSuccess = (rejected: 'rejectedSpans' | 'rejectedLogRecords', what: string) => ({
  type: 'object',
  description: `Present when ${what} were refused (the rest is stored): how many, and why.`,
  properties: {
    [rejected]: { type: ['integer', 'string'], description: 'int64 (OTLP/JSON may write it as text)' },
    errorMessage: { type: 'string' },
  },
});

/** An OTLP export request's bodies, in protobuf and in OTLP/JSON (`resource` its top field). */
const exportBody = (request: string, resource: string, example: unknown) => ({
  required: true,
  content: {
    'application/x-protobuf': {
      schema: binary(`An OTLP ${request} in protobuf (gzip with Content-Encoding: gzip).`),
      example: '(the protobuf bytes an OTLP exporter writes)',
    },
    'application/protobuf': {
      schema: binary('The same, under the other protobuf media type.'),
      example: '(the protobuf bytes an OTLP exporter writes)',
    },
    'application/json': {
      schema: {
        type: 'object',
        description: `An OTLP/JSON ${request}: trace and span ids in hex.`,
        properties: { [resource]: { type: 'array', items: { type: 'object' } } },
      },
      example,
    },
  },
});

/** Its answer, in the request's encoding, with the partial success. */
const exportAnswer = (response: string, rejected: 'rejectedSpans' | 'rejectedLogRecords', what: string) => ({
  status: 200,
  contentType: 'application/x-protobuf',
  documentedContent: {
    'application/x-protobuf': binary(`An ${response} in protobuf (to a protobuf request).`),
    'application/json': {
      type: 'object',
      description: `An ${response} in OTLP/JSON (to a JSON request).`,
      properties: { partialSuccess: partialSuccess(rejected, what) },
    },
  },
});

const OTLP_JSON_SPAN = {
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: 'eee19b7ec3c1b174',
  name: 'answer-question',
  startTimeUnixNano: '1764547200000000000',
  endTimeUnixNano: '1764547200900000000',
  attributes: [{ key: 'input.value', value: { stringValue: '{"question":"what is our refund policy?"}' } }],
};

const OTLP_JSON_EVALUATION = {
  timeUnixNano: '1764547201000000000',
  eventName: 'gen_ai.evaluation.result',
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: 'eee19b7ec3c1b174',
  attributes: [
    { key: 'gen_ai.evaluation.name', value: { stringValue: 'relevance' } },
    { key: 'gen_ai.evaluation.score.value', value: { doubleValue: 0.25 } },
    { key: 'gen_ai.evaluation.score.label', value: { stringValue: 'irrelevant' } },
  ],
};

export const ingestOtlpTraces = defineOperation({
  name: 'ingest-otlp-traces',
  method: 'POST',
  // One greedy resource under /otlp (v1/traces, v1/logs and v1/metrics its values): the deep paths
  // would cost the API's template two resources more than any other operation. The document shows
  // the traces and logs paths as operations of their own; v1/metrics only ever answers a 404
  // (docs/opentelemetry.md), which OpenAPI has no form for, so it is not shown.
  path: '/pipelines/{pipelineId}/otlp/{signal+}',
  documentedPath: '/pipelines/{pipelineId}/otlp/v1/traces',
  summary:
    'OTLP/HTTP (protobuf or JSON, gzip allowed): traces become executions and signals. Limits: docs/opentelemetry.md. …/otlp/v1/metrics answers 404: metrics are not taken.',
  alsoDocuments: [
    {
      name: 'ingest-otlp-logs',
      documentedPath: '/pipelines/{pipelineId}/otlp/v1/logs',
      summary:
        "OTLP/HTTP logs (protobuf or JSON, gzip allowed): gen_ai.evaluation.result log records become signals of their trace's execution; other log records are refused (partialSuccess). Limits: docs/opentelemetry.md.",
      documentedBody: exportBody('ExportLogsServiceRequest', 'resourceLogs', {
        resourceLogs: [{ scopeLogs: [{ logRecords: [OTLP_JSON_EVALUATION] }] }],
      }),
      response: exportAnswer('ExportLogsServiceResponse', 'rejectedLogRecords', 'log records'),
    },
  ],
  access: { data: 'readWrite', send: ['guardrail-checks'] },
  // The largest accepted request (32 MB inflated, 2,000,000 values) decodes in under 200 MB of heap
  // and about 2.5 s of one core here: 1,536 MB (0.87 of a vCPU on Lambda) keeps it a few seconds
  // within the 10 s timeout. At most 20 at once, so a flood cannot take the account's concurrency.
  memoryMb: 1536,
  reservedConcurrency: 20,
  params: { pipelineId: idSchema, signal: z.enum(['v1/traces', 'v1/logs', 'v1/metrics']) },
  documentedBody: exportBody('ExportTraceServiceRequest', 'resourceSpans', {
    resourceSpans: [{ scopeSpans: [{ spans: [OTLP_JSON_SPAN] }] }],
  }),
  response: exportAnswer('ExportTraceServiceResponse', 'rejectedSpans', 'spans'),
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
    const deps = {
      pipelines,
      settings,
      traces: staging.traces,
      clock: systemClock,
      recordSignals: makeRecordSignals({ ...record, guardrails }),
      recordExecutions: makeRecordExecutions({ ...record, guardrails }),
      reviseExecution: staging.reviseExecution,
      redact: redactText,
    };
    return { traces: makeIngestTraces(deps), logs: makeIngestLogs(deps) };
  };
  return async ({ principal, params, event }) => {
    if (params.signal === 'v1/metrics') throw new NotFoundError(METRICS_NOT_TAKEN);
    const encoding = encodingOf(event);
    const signal = params.signal === 'v1/logs' ? 'logs' : 'traces';
    const body = bodyOf(event, signal);
    const ingest = ingestFor();
    const outcome = await whenStoreAnswers(async () => {
      if (signal === 'logs') {
        const decoded = decodeLogsRequest(body, encoding);
        return ingest.logs(principal, params.pipelineId, decoded.records, decoded);
      }
      const decoded = decodeRequest(body, encoding);
      return ingest.traces(principal, params.pipelineId, decoded, decoded);
    });
    return { raw: exportResponse(encoding, outcome.rejected, outcome.reasons, signal) };
  };
});

const METRICS_NOT_TAKEN =
  'OTLP metrics are not taken: this API reads traces (…/otlp/v1/traces) and evaluation results as logs (…/otlp/v1/logs). Turn the metrics exporter off (OTEL_METRICS_EXPORTER=none).';

/** The work's result; the store's throttling is a 503 with Retry-After (exporters send again). */
async function whenStoreAnswers<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error && THROTTLED.has(error.name)) {
      throw new ServiceUnavailableError('The store is busy: send the batch again after Retry-After.', {
        cause: error,
      });
    }
    throw error;
  }
}
