/**
 * `metrics <pipelineId>`: the pipeline over time (GET …/metrics) from a duration or a time ago up
 * to the bucket running now, by minute, hour or day, whole or per configuration; a sparkline per
 * column above the table, or the API's answer as it came with --json.
 */
import { type Command, Option } from 'commander';
import type { MetricsAnswer } from '../lambdas/core/schemas/metrics.ts';
import { call } from './api.ts';
import { contextOf, type Io } from './context.ts';
import { renderMetrics } from './metrics-render.ts';

type Step = MetricsAnswer['step'];
const STEP_MS: Record<Step, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a duration back from now (90m, 24h, 7d) or a UTC time; the start as epoch ms. */
export function parseSince(text: string, now: number): number {
  const duration = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (duration) return now - Number(duration[1]) * (UNIT_MS[duration[2] ?? 'h'] ?? 0);
  const time = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time))
    throw new Error(
      `--since takes a duration such as 90m, 24h or 7d, or a UTC time such as 2026-12-01T00:00:00Z; got "${text}".`,
    );
  return time;
}

/** The query: whole steps from the one `since` falls in up to the end of the one running now. */
export function metricsQuery(since: number, now: number, step: Step) {
  const size = STEP_MS[step];
  const to = Math.floor(now / size) * size + size;
  const from = Math.min(Math.floor(since / size) * size, to - size);
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), step };
}

export function addMetricsCommand(program: Command, io: Io): void {
  program
    .command('metrics')
    .description('a pipeline over time: executions, failure rate, p95 duration, tokens, signals and scores')
    .argument('<pipelineId>')
    .option('--since <duration|time>', 'from this long ago (90m, 24h, 7d) or this UTC time', '24h')
    .addOption(
      new Option('--step <step>', 'the size of a bucket').choices(['minute', 'hour', 'day']).default('hour'),
    )
    .option('--by-configuration', 'one series per configuration the executions ran')
    .action(
      async (
        pipelineId: string,
        options: { since: string; step: Step; byConfiguration?: boolean },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const now = Date.now();
        const query = {
          ...metricsQuery(parseSince(options.since, now), now, options.step),
          ...(options.byConfiguration ? { groupBy: 'configuration' as const } : {}),
        };
        const answer = await call(
          context.client.GET('/pipelines/{pipelineId}/metrics', { params: { path: { pipelineId }, query } }),
          context.apiUrl,
        );
        context.print(answer, () => renderMetrics(answer));
      },
    );
}
