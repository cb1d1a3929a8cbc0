/**
 * The CLI's `monitors list|create|delete`: a pipeline's monitors and their state, each command one
 * typed-client call and a rendering.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import { nextPage, type PageOptions, parseLimit } from './commands.ts';
import { contextOf, type Io } from './context.ts';
import { fields, table } from './render.ts';

const METRICS = [
  'failure_rate',
  'duration_p95',
  'duration_mean',
  'tokens_mean',
  'signal_mean',
  'executions',
] as const;
type Metric = (typeof METRICS)[number];

function oneOf<T extends string>(values: readonly T[], flag: string) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) {
      throw new Error(`${flag} must be one of ${values.join(', ')}`);
    }
    return value as T;
  };
}

function number(flag: string, integer = false) {
  return (value: string): number => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || (integer && !Number.isInteger(parsed))) {
      throw new Error(`${flag} must be ${integer ? 'an integer' : 'a number'}, not "${value}"`);
    }
    return parsed;
  };
}

interface CreateOptions {
  name: string;
  metric: Metric;
  kind?: string;
  comparator: 'above' | 'below';
  threshold: number;
  window: number;
  minExecutions?: number;
}

export function addMonitorCommands(program: Command, io: Io): void {
  const monitors = program
    .command('monitors')
    .description("a pipeline's monitors: a metric over a trailing window, judged every minute");
  monitors
    .command('list')
    .description('the monitors with their state (ok, alert, no_data), since when and the last value')
    .argument('<pipelineId>')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(async (pipelineId: string, options: PageOptions, command: Command) => {
      const context = contextOf(io, command);
      const page = await call(
        context.client.GET('/pipelines/{pipelineId}/monitors', {
          params: { path: { pipelineId }, query: options },
        }),
        context.apiUrl,
      );
      context.print(
        page,
        () =>
          table(
            page.items.map((monitor) => ({
              id: monitor.id,
              name: monitor.name,
              state: monitor.state,
              since: monitor.since,
              lastValue: monitor.lastValue === null ? '—' : String(monitor.lastValue),
              rule: `${monitor.metric}${monitor.kind ? `(${monitor.kind})` : ''} ${monitor.comparator} ${monitor.threshold} over ${monitor.windowMinutes} min`,
            })),
            ['id', 'name', 'state', 'since', 'lastValue', 'rule'],
          ) + nextPage(page.nextCursor),
      );
    });
  monitors
    .command('create')
    .description('add a monitor; it is no_data until its first judgement, within a minute')
    .argument('<pipelineId>')
    .requiredOption('--name <name>', 'what the monitor watches, in words')
    .requiredOption('--metric <metric>', METRICS.join(' | '), oneOf(METRICS, '--metric'))
    .option('--kind <kind>', 'the signal kind (with --metric signal_mean only)')
    .requiredOption(
      '--comparator <comparator>',
      'above | below',
      oneOf(['above', 'below'] as const, '--comparator'),
    )
    .requiredOption(
      '--threshold <value>',
      'the value to compare with (failure_rate: 0 to 1)',
      number('--threshold'),
    )
    .requiredOption('--window <minutes>', 'the trailing window, 5 to 1440 minutes', number('--window', true))
    .option(
      '--min-executions <n>',
      'fewer samples in the window is no_data (default 1)',
      number('--min-executions', true),
    )
    .action(async (pipelineId: string, options: CreateOptions, command: Command) => {
      const context = contextOf(io, command);
      const body = {
        name: options.name,
        metric: options.metric,
        ...(options.kind ? { kind: options.kind } : {}),
        comparator: options.comparator,
        threshold: options.threshold,
        windowMinutes: options.window,
        ...(options.minExecutions !== undefined ? { minExecutions: options.minExecutions } : {}),
      };
      const created = await call(
        context.client.POST('/pipelines/{pipelineId}/monitors', { params: { path: { pipelineId } }, body }),
        context.apiUrl,
      );
      context.print(created, () => fields(created));
    });
  monitors
    .command('delete')
    .description('delete a monitor; it is judged no more')
    .argument('<pipelineId>')
    .argument('<monitorId>')
    .action(async (pipelineId: string, monitorId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      await call(
        context.client.DELETE('/pipelines/{pipelineId}/monitors/{monitorId}', {
          params: { path: { pipelineId, monitorId } },
        }),
        context.apiUrl,
      );
      context.print(undefined, () => `Deleted monitor ${monitorId}.`);
    });
}
