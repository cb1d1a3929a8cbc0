/*
 * GET /pipelines/{pipelineId}/export?cursor: every record of a pipeline as NDJSON pages of at most
 * 5 MB, `{"type", "record"}` a line, the next page in `Link: <…>; rel="next"`.
 */
import * as z from 'zod/mini';
import { idSchema } from '../core/schemas/common.ts';
import { makeExportPipeline } from '../core/use-cases/lifecycle.ts';
import { cursorBinding } from '../http/cursors.ts';
import { operationHandler } from '../http/operation.ts';
import { locationOf } from '../http/response.ts';
import { systemClock } from '../wiring/clock.ts';
import { cursorSealFromEnv } from '../wiring/cursors.ts';
import {
  exportStoreFromEnv,
  pipelineReadsFromEnv,
  teamSettingsStoreFromEnv,
} from '../wiring/repositories.ts';
import { defineOperation } from './declaration.ts';

export const exportPipeline = defineOperation({
  name: 'export-pipeline',
  method: 'GET',
  path: '/pipelines/{pipelineId}/export',
  summary:
    'Every record of the pipeline (pipeline, configurations, activations, rollouts, signals, executions, its hourly series as counters to add up, runs) as application/x-ndjson, one {"type", "record"} a line, in pages of at most 5 MB; the next page is in the Link header.',
  access: { runs: 'read', data: 'read', sessionSecret: true },
  params: { pipelineId: idSchema },
  query: {
    cursor: {
      schema: z.optional(z.string().check(z.minLength(1))),
      description: 'From the `Link: <…>; rel="next"` header of the previous page; opaque.',
      invalid: 'cursor must be the one in the Link header of the previous page.',
      documented: { type: 'string', minLength: 1 },
    },
  },
  response: {
    status: 200,
    contentType: 'application/x-ndjson',
    headers: {
      Link: {
        type: 'string',
        description: '`<url>; rel="next"` while more pages follow; absent on the last.',
      },
      'X-Export-Records': { type: 'integer', description: 'Records in this page.' },
    },
  },
  errors: [404],
});

export const handler = /* @__PURE__ */ operationHandler(exportPipeline, () => {
  const exportPage = makeExportPipeline({
    pipelines: pipelineReadsFromEnv(),
    exports: exportStoreFromEnv(),
    settings: teamSettingsStoreFromEnv(),
    clock: systemClock,
  });
  const seal = cursorSealFromEnv();
  return async ({ principal, params, query, event }) => {
    const binding = cursorBinding(exportPipeline, { principal, params, query });
    const cursor = query.cursor === undefined ? undefined : await seal.open(query.cursor, binding);
    const page = await exportPage(principal, params.pipelineId, cursor);
    const next = page.nextCursor
      ? `<${locationOf(event, `/pipelines/${params.pipelineId}/export`)}?cursor=${await seal.seal(page.nextCursor, binding)}>; rel="next"`
      : undefined;
    return {
      raw: {
        statusCode: 200,
        headers: {
          'content-type': 'application/x-ndjson; charset=utf-8',
          'cache-control': 'no-store',
          'x-export-records': String(page.records),
          ...(next ? { link: next } : {}),
        },
        body: page.body,
      },
    };
  };
});
