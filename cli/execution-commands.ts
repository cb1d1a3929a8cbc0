/**
 * The CLI's reading of what a pipeline recorded (through the API or from its OpenTelemetry traces):
 * executions list|show, beside `executions add`, and signals list, beside `signals add`.
 */
import { type Command, Option } from 'commander';
import { call } from './api.ts';
import { nextPage, type PageOptions, parseLimit } from './commands.ts';
import { contextOf, type Io } from './context.ts';
import { fields, table } from './render.ts';

const CACHE_COLUMNS = ['cacheReadInputTokens', 'cacheWriteInputTokens'] as const;

export function addExecutionCommands(program: Command, io: Io): void {
  const executions =
    program.commands.find((command) => command.name() === 'executions') ?? program.command('executions');
  executions
    .command('list')
    .description("a pipeline's executions, newest first")
    .argument('<pipelineId>')
    .addOption(
      new Option('--status <status>', 'only executions with this status').choices(['succeeded', 'failed']),
    )
    .option('--configuration <configurationId>', 'only executions of this configuration')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(
      async (
        pipelineId: string,
        options: PageOptions & { status?: 'succeeded' | 'failed'; configuration?: string },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const { configuration, ...rest } = options;
        const query = { ...rest, ...(configuration ? { configurationId: configuration } : {}) };
        const page = await call(
          context.client.GET('/pipelines/{pipelineId}/executions', {
            params: { path: { pipelineId }, query },
          }),
          context.apiUrl,
        );
        const rows = page.items.map((execution) => ({ ...execution, source: execution.source ?? 'api' }));
        context.print(
          page,
          () =>
            table(rows, ['id', 'status', 'durationMs', 'startedAt', 'configurationId', 'source']) +
            nextPage(page.nextCursor),
        );
      },
    );
  executions
    .command('show')
    .description('one execution: its slots, its source and the signals citing it')
    .argument('<pipelineId>')
    .argument('<executionId>')
    .action(async (pipelineId: string, executionId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const shown = await call(
        context.client.GET('/pipelines/{pipelineId}/executions/{executionId}', {
          params: { path: { pipelineId, executionId } },
        }),
        context.apiUrl,
      );
      context.print(shown, () =>
        [
          fields(shown.execution, [
            'id',
            'status',
            'source',
            'durationMs',
            'startedAt',
            'configurationId',
            'error',
          ]),
          '',
          'Slots:',
          table(shown.execution.slotResults ?? [], [
            'slotId',
            'status',
            'durationMs',
            'inputTokens',
            'outputTokens',
            // Prompt-cache counts, shown when a trace reported them (docs/conventions.md).
            ...CACHE_COLUMNS.filter((column) =>
              (shown.execution.slotResults ?? []).some((slot) => slot[column] !== undefined),
            ),
            'error',
          ]),
          '',
          'Signals citing it:',
          table(shown.signals, ['kind', 'severity', 'slotId', 'value', 'message']),
        ].join('\n'),
      );
    });
  addSignalList(program, io);
}

/** `signals list`: newest first by occurrence, by kind, severity, slot and a window of times. */
function addSignalList(program: Command, io: Io): void {
  const signals =
    program.commands.find((command) => command.name() === 'signals') ?? program.command('signals');
  signals
    .command('list')
    .description("a pipeline's signals, newest first by when they occurred")
    .argument('<pipelineId>')
    .option('--kind <kind>', 'only signals of this kind')
    .addOption(
      new Option('--severity <severity>', 'only signals of this severity').choices([
        'info',
        'warning',
        'critical',
      ]),
    )
    .option('--slot <slotId>', 'only signals of this slot')
    .option('--since <time>', 'only signals at or after this UTC time (e.g. 2026-12-01T00:00:00Z)')
    .option('--until <time>', 'only signals at or before this UTC time')
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(
      async (
        pipelineId: string,
        options: PageOptions & {
          kind?: string;
          severity?: 'info' | 'warning' | 'critical';
          slot?: string;
          since?: string;
          until?: string;
        },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const { slot, ...rest } = options;
        const page = await call(
          context.client.GET('/pipelines/{pipelineId}/signals', {
            params: { path: { pipelineId }, query: { ...rest, ...(slot ? { slotId: slot } : {}) } },
          }),
          context.apiUrl,
        );
        context.print(
          page,
          () =>
            table(page.items, [
              'occurredAt',
              'severity',
              'kind',
              'slotId',
              'value',
              'executionId',
              'message',
            ]) + nextPage(page.nextCursor),
        );
      },
    );
}
