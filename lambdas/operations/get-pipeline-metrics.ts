/* GET /pipelines/{pipelineId}/metrics?from&to&step&groupBy: the pipeline over time, with its activations and rollouts. */
import * as z from 'zod/mini';
import { idSchema, timestampSchema } from '../core/schemas/common.ts';
import { MAX_BUCKETS, metricsAnswerSchema, stepSchema } from '../core/schemas/metrics.ts';
import { makeGetMetrics } from '../core/use-cases/metrics.ts';
import { operationHandler } from '../http/operation.ts';
import { systemClock } from '../wiring/clock.ts';
import {
  peopleDirectoryFromEnv,
  pipelineMomentsFromEnv,
  pipelineReadsFromEnv,
  seriesReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

/**
 * 1440 as "1,440" without toLocaleString: the summary is built when the module loads, and a
 * process's first toLocaleString loads ICU's number formats (about 20 ms of this function's cold
 * start, measured by the bundles bench).
 */
const grouped = (value: number) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export const getPipelineMetrics = defineOperation({
  name: 'get-pipeline-metrics',
  method: 'GET',
  path: '/pipelines/{pipelineId}/metrics',
  summary:
    `The pipeline over time: buckets of a minute, an hour or a day (at most ${grouped(MAX_BUCKETS)} an answer) with executions, failures, the failure rate, ` +
    "durations (exact mean; p50, p95 and p99 within 2 %), tokens, signals by severity and each score kind's count and mean; " +
    'optionally one series per configuration; and its activations and rollouts as annotations naming versions and people. ' +
    "Executions count at their startedAt, signals at their occurredAt; inside the team's retention.",
  // data: written too: a read keeps the packs of the periods that have ended (store/series.ts).
  access: { data: 'readWrite', events: 'read', readsNames: true, sessionSecret: true },
  params: { pipelineId: idSchema },
  query: {
    from: {
      schema: z.optional(timestampSchema),
      description:
        "The range's start (UTC, e.g. 2026-12-01T00:00:00Z), rounded down to the step; default 24 hours before `to`.",
      invalid: 'from must be a UTC timestamp such as 2026-12-01T00:00:00Z.',
      documented: { type: 'string', format: 'date-time' },
    },
    to: {
      schema: z.optional(timestampSchema),
      description: "The range's end (UTC), rounded up to the step; default now.",
      invalid: 'to must be a UTC timestamp such as 2026-12-02T00:00:00Z.',
      documented: { type: 'string', format: 'date-time' },
    },
    step: {
      schema: z.optional(stepSchema),
      description: 'The bucket size: minute, hour (the default) or day.',
      invalid: 'step must be minute, hour or day.',
      documented: { type: 'string', enum: ['minute', 'hour', 'day'] },
    },
    groupBy: {
      schema: z.optional(z.literal('configuration')),
      description:
        'configuration: one more series per configuration that ran (its executions; signals name no configuration).',
      invalid: 'groupBy must be configuration.',
      documented: { type: 'string', enum: ['configuration'] },
    },
  },
  response: { status: 200, schema: metricsAnswerSchema },
  errors: [400, 404],
});

export const handler = /* @__PURE__ */ operationHandler(getPipelineMetrics, () => {
  const get = makeGetMetrics({
    pipelines: pipelineReadsFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    series: seriesReadsFromEnv(),
    moments: pipelineMomentsFromEnv(),
    people: peopleDirectoryFromEnv(),
    clock: systemClock,
  });
  return async ({ principal, params, query }) => ({
    body: await get(principal, params.pipelineId, {
      from: query.from,
      to: query.to,
      step: query.step,
      groupBy: query.groupBy,
    }),
  });
});
