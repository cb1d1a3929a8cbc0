/**
 * Parallel starts through the local stack: 100 `POST /pipelines/{id}/synthesize` with heuristic-v1
 * at once on one pipeline, then 100 spread over ten pipelines. For each: the time from the first
 * start until every run is terminal, POST → `generated` p50 and p99, runs lost (not `generated`
 * within the limit), and whether every proposed configuration got its own version.
 * Targets: all terminal within 30 s, 0 lost, versions unique.
 */

import { DEMO_SLOTS } from '../local/seed.ts';
import type { LocalStack } from '../local/stack.ts';

export interface LoadFigures {
  label: string;
  runs: number;
  allTerminalMs: number;
  generatedP50Ms: number;
  generatedP99Ms: number;
  lost: number;
  failed: number;
  /** Every generated run proposed a configuration, and no two took the same version of a pipeline. */
  uniqueVersions: boolean;
  /** Generated runs that proposed nothing (and so took no version). */
  proposedNothing: number;
}

const LIMIT_MS = 30_000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function measureParallelStarts(stack: LocalStack, runs = 100): Promise<LoadFigures[]> {
  const team = stack.teams[0];
  if (!team) throw new Error('the local stack seeds two teams');
  const headers = { authorization: `Bearer ${team.apiToken}`, 'content-type': 'application/json' };
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${route}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const pipelines: string[] = [];
  for (let i = 0; i < 10; i++) {
    const created = await call('POST', '/pipelines', { name: `load ${i}`, slots: DEMO_SLOTS });
    pipelines.push(created.body.id as string);
    // Timeouts of the retrieval slot: each run then proposes a configuration and takes a version
    // of its pipeline (a run with nothing to change takes none, and would leave nothing to check).
    const recorded = await call('POST', `/pipelines/${created.body.id as string}/signals`, {
      signals: Array.from({ length: 4 }, (_, n) => ({
        kind: 'timeout',
        severity: 'critical',
        message: `Retrieval timed out after 1500 ms (query ${n + 1})`,
        slotId: 'retrieve',
      })),
    });
    if (recorded.status !== 201) throw new Error(`recording the load's signals answered ${recorded.status}`);
  }

  async function wave(label: string, pipelineFor: (index: number) => string): Promise<LoadFigures> {
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: runs }, async (_, index) => {
        const begin = performance.now();
        const start = await call('POST', `/pipelines/${pipelineFor(index)}/synthesize`, {
          synthesisHandler: 'heuristic-v1',
        });
        if (start.status !== 202)
          return { status: `start ${start.status}`, ms: Number.NaN, configurationId: null };
        for (;;) {
          const polled = await call('GET', `/synthesis-runs/${start.body.id as string}`);
          const status = polled.body.status as string;
          if (status === 'generated' || status === 'failed' || performance.now() - started > LIMIT_MS)
            return {
              status,
              ms: performance.now() - begin,
              configurationId: polled.body.proposedConfigurationId as string | null,
            };
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }),
    );
    const allTerminalMs = performance.now() - started;
    const generated = outcomes.filter((outcome) => outcome.status === 'generated');
    const versions = await Promise.all(
      outcomes.map(async (outcome, index) => {
        if (outcome.status !== 'generated' || outcome.configurationId === null) return null;
        const pipelineId = pipelineFor(index);
        const configuration = await call(
          'GET',
          `/pipelines/${pipelineId}/configurations/${outcome.configurationId}`,
        );
        return `${pipelineId}#${configuration.body.version as number}`;
      }),
    );
    const taken = versions.filter((version) => version !== null);
    // A run that proposed nothing took no version: it fails the check rather than passing it.
    const proposedNothing = generated.filter((outcome) => outcome.configurationId === null).length;
    return {
      label,
      runs,
      allTerminalMs,
      generatedP50Ms: percentile(
        generated.map((outcome) => outcome.ms),
        50,
      ),
      generatedP99Ms: percentile(
        generated.map((outcome) => outcome.ms),
        99,
      ),
      lost: runs - generated.length,
      failed: outcomes.filter((outcome) => outcome.status === 'failed').length,
      uniqueVersions: proposedNothing === 0 && new Set(taken).size === taken.length,
      proposedNothing,
    };
  }

  // One pipeline: every run allocates a version of the same pipeline at once.
  const onePipeline = await wave(`${runs} starts on one pipeline`, () => pipelines[0] as string);
  const tenPipelines = await wave(
    `${runs} starts over ten pipelines`,
    (index) => pipelines[index % 10] as string,
  );
  return [onePipeline, tenPipelines];
}

export function formatLoadTable(rows: LoadFigures[]): string {
  return rows
    .map(
      (row) =>
        `${row.label}: all terminal in ${(row.allTerminalMs / 1000).toFixed(1)} s (target ≤ 30 s), POST → generated p50 ${row.generatedP50Ms.toFixed(0)} ms, p99 ${row.generatedP99Ms.toFixed(0)} ms, lost ${row.lost} (failed ${row.failed}), versions ${row.uniqueVersions ? 'unique' : row.proposedNothing > 0 ? `not checked (${row.proposedNothing} runs proposed nothing)` : 'DUPLICATED'} ${row.allTerminalMs <= 30_000 && row.lost === 0 && row.uniqueVersions ? 'ok' : 'MISSED'}`,
    )
    .join('\n');
}
