/**
 * The CLI's reading of what a pipeline recorded (through the API or from its OpenTelemetry traces):
 * executions list|show, beside `executions add`.
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
}
