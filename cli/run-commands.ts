/**
 * The CLI's commands about synthesis runs: synthesize (with --wait), runs list/show/diff,
 * approve, reject, and activate (roll back or forward).
 */
import { type Command, Option } from 'commander';
import { call } from './api.ts';
import type { SynthesisHandler, SynthesisRun } from './client.ts';
import { nextPage, type PageOptions, parseLimit } from './commands.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { CliFailure, EXIT } from './failures.ts';
import { fields, renderDiff, renderRun, table } from './render.ts';
import {
  collectGuard,
  type GuardrailFlag,
  parseMinExecutions,
  parseSteps,
  rolloutBody,
} from './rollout-flags.ts';
import { abortableSleep, startSpinner, waitForRun } from './wait.ts';

const RUN_STATUSES = ['pending', 'generating', 'generated', 'approved', 'rejected', 'failed'];
export const DEFAULT_WAIT_SECONDS = 600;

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new Error('--timeout must be a number of seconds ≥ 0');
  return seconds;
}

async function getRun(context: Context, id: string): Promise<SynthesisRun> {
  return call(context.client.GET('/synthesis-runs/{id}', { params: { path: { id } } }), context.apiUrl);
}

async function waitAndReport(context: Context, begun: { id: string }, timeoutSeconds: number): Promise<void> {
  // Read as GET answers it (with people's names), which the synthesize answer does not carry.
  const started = await getRun(context, begun.id);
  const spinner = startSpinner(context.io.stderr);
  const describe = (run: SynthesisRun) =>
    `run ${run.id} ${run.status}${run.retryReason ? ` (retrying: ${run.retryReason})` : ''}`;
  spinner.update(describe(started));
  let outcome: Awaited<ReturnType<typeof waitForRun>>;
  try {
    outcome = await waitForRun(started, {
      getRun: () => getRun(context, started.id),
      sleep: abortableSleep,
      now: Date.now,
      signal: context.io.interrupt,
      timeoutMs: timeoutSeconds * 1000,
      onPoll: (run) => spinner.update(describe(run)),
    });
  } finally {
    spinner.stop();
  }
  const { run } = outcome;
  context.print(run, () => renderRun(run, context.palette));
  const follow = `pipeline-synthesis runs show ${run.id}`;
  switch (outcome.kind) {
    case 'finished':
      return;
    case 'failed':
      throw new CliFailure(EXIT.runFailed, `Run ${run.id} failed: ${run.errorMessage ?? 'no reason given'}`);
    case 'timedOut':
      throw new CliFailure(
        EXIT.timedOut,
        `Run ${run.id} is still ${run.status} after ${timeoutSeconds} s; it goes on. Follow it with: ${follow}`,
      );
    case 'interrupted':
      throw new CliFailure(
        EXIT.interrupted,
        `Stopped waiting; run ${run.id} (${run.status}) goes on. Follow it with: ${follow}`,
      );
  }
}

/** The run commands: one function a command or command group. */
export function addRunCommands(program: Command, io: Io): void {
  addSynthesizeCommand(program, io);
  addRunsCommands(program, io);
  addDecisionCommands(program, io);
  addActivateCommand(program, io);
}

function addSynthesizeCommand(program: Command, io: Io): void {
  program
    .command('synthesize')
    .description('start a synthesis run of a pipeline; --wait follows it until it is decided')
    .argument('<pipelineId>')
    .option('--handler <name>', 'heuristic-v1 or claude-v1 (default: the deployment default)')
    .option('--idempotency-key <key>', 'repeating the command with the same key answers the same run')
    .option(
      '--parent <runId>',
      "a refinement: learns from that evaluated run's results (see optimize, which loops this)",
    )
    .option('--wait', 'poll until the run is generated or failed (exit 3 if failed)')
    .option(
      '--timeout <seconds>',
      `with --wait: give up after this long (exit 4)`,
      parseSeconds,
      DEFAULT_WAIT_SECONDS,
    )
    .action(
      async (
        pipelineId: string,
        options: {
          handler?: string;
          idempotencyKey?: string;
          parent?: string;
          wait?: boolean;
          timeout: number;
        },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const run = await call(
          context.client.POST('/pipelines/{pipelineId}/synthesize', {
            params: {
              path: { pipelineId },
              ...(options.idempotencyKey ? { header: { 'Idempotency-Key': options.idempotencyKey } } : {}),
            },
            // The server names the handlers it has: an unknown one is its 400, said to the user.
            body: {
              ...(options.handler ? { synthesisHandler: options.handler as SynthesisHandler } : {}),
              ...(options.parent ? { parentRunId: options.parent } : {}),
            },
          }),
          context.apiUrl,
        );
        if (options.wait) return waitAndReport(context, run, options.timeout);
        context.print(
          run,
          () =>
            `Started run ${run.id} (${run.status}, ${run.synthesisHandler}).\nFollow it: pipeline-synthesis runs show ${run.id}`,
        );
      },
    );
}

function addRunsCommands(program: Command, io: Io): void {
  const runs = program.command('runs').description('synthesis runs');
  runs
    .command('list')
    .description("a pipeline's runs, newest first")
    .argument('<pipelineId>')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .option('--limit <n>', 'items per page (1-100)', parseLimit)
    .option('--cursor <cursor>', 'the next page')
    .action(
      async (
        pipelineId: string,
        options: PageOptions & { status?: SynthesisRun['status'] },
        command: Command,
      ) => {
        const context = contextOf(io, command);
        const page = await call(
          context.client.GET('/pipelines/{pipelineId}/synthesis-runs', {
            params: { path: { pipelineId }, query: options },
          }),
          context.apiUrl,
        );
        context.print(
          page,
          () =>
            table(page.items, ['id', 'status', 'synthesisHandler', 'confidence', 'createdAt']) +
            nextPage(page.nextCursor),
        );
      },
    );
  runs
    .command('show')
    .description('one run: status, diagnosis, changes, warnings')
    .argument('<runId>')
    .action(async (runId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const run = await getRun(context, runId);
      context.print(run, () => renderRun(run, context.palette));
    });
  runs
    .command('diff')
    .description("what a run's proposal changes, slot by slot (coloured on a terminal)")
    .argument('<runId>')
    .action(async (runId: string, _options, command: Command) => {
      const context = contextOf(io, command);
      const diff = await call(
        context.client.GET('/synthesis-runs/{id}/diff', { params: { path: { id: runId } } }),
        context.apiUrl,
      );
      context.print(diff, () => renderDiff(diff, context.palette));
    });
}

function addDecisionCommands(program: Command, io: Io): void {
  program
    .command('approve')
    .description(
      "approve a generated run: its proposal (or the --changes chosen) becomes the pipeline's active configuration, or with --rollout is served to part of the traffic",
    )
    .argument('<runId>')
    .option('--changes <ids>', 'only these changes, e.g. 1,3 (default: every change)', parseChangeIds)
    .option('--rebase', 'apply the changes on top of the configuration active now, when the base moved')
    .option(
      '--rollout <percent>',
      'start a rollout serving the result to this percent (1-99) of traffic',
      parsePercent,
    )
    .option(
      '--steps <percents>',
      'with --rollout: the shares it rises through as each one holds, starting at --rollout, e.g. 5,25,50',
      parseSteps,
    )
    .option(
      '--guard <metric>',
      'with --rollout, repeatable: a guarded metric and the regression tolerated — failure_rate[:0.01], ' +
        'duration_ms[:100], tokens[:50], signal:<kind>:higher|lower:<threshold> (default: failure_rate:0.01)',
      collectGuard,
    )
    .option(
      '--min-executions <n>',
      'with --rollout: candidate executions at a step before it moves up or promotes (30-100000, default 200)',
      parseMinExecutions,
    )
    .option(
      '--auto-promote',
      'with --rollout: promote at the last step once every guarded metric is shown within its threshold',
    )
    .option(
      '--no-auto-rollback',
      'with --rollout: do not roll back automatically when a metric is shown worse',
    )
    .option('--override-reason <text>', "admins: approve against the pipeline's evaluation rules, saying why")
    .action(async (runId: string, options: ApproveOptions, command: Command) => {
      const context = contextOf(io, command);
      const body = approveBody(options);
      const run = await call(
        context.client.POST('/synthesis-runs/{id}/approve', { params: { path: { id: runId } }, body }),
        context.apiUrl,
      );
      const steps = body.rollout?.steps;
      context.print(run, () =>
        run.rolloutId
          ? `Approved run ${run.id}: rollout ${run.rolloutId} serves configuration ${run.appliedConfigurationId} to ${body.rollout?.percent} % of traffic${steps && steps.length > 1 ? ` (steps ${steps.join(' → ')} %)` : ''}.\nFollow it: pipeline-synthesis rollout show ${run.pipelineId}`
          : `Approved run ${run.id}${run.approvedChangeIds ? ` (changes ${run.approvedChangeIds.join(', ')})` : ''}: configuration ${run.appliedConfigurationId ?? run.proposedConfigurationId} is active.`,
      );
    });
  program
    .command('reject')
    .description('reject a generated run')
    .argument('<runId>')
    .option('--reason <text>', 'why, for the record')
    .action(async (runId: string, options: { reason?: string }, command: Command) => {
      const context = contextOf(io, command);
      const run = await call(
        context.client.POST('/synthesis-runs/{id}/reject', {
          params: { path: { id: runId } },
          body: options.reason ? { reason: options.reason } : {},
        }),
        context.apiUrl,
      );
      context.print(run, () => `Rejected run ${run.id}.`);
    });
}

interface ApproveOptions {
  changes?: string[];
  rebase?: boolean;
  rollout?: number;
  steps?: number[];
  guard?: GuardrailFlag[];
  minExecutions?: number;
  autoPromote?: boolean;
  autoRollback: boolean;
  overrideReason?: string;
}

function parseChangeIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0) throw new Error('--changes needs change ids, e.g. 1,3');
  return ids;
}

function parsePercent(value: string): number {
  const percent = Number(value);
  if (!Number.isInteger(percent) || percent < 1 || percent > 99)
    throw new Error('--rollout must be a whole percent from 1 to 99');
  return percent;
}

function approveBody(options: ApproveOptions) {
  if (
    options.rollout === undefined &&
    (options.autoPromote ||
      options.minExecutions !== undefined ||
      !options.autoRollback ||
      options.steps ||
      options.guard)
  ) {
    throw new CliFailure(
      EXIT.usage,
      '--steps, --guard, --auto-promote, --min-executions and --no-auto-rollback go with --rollout <percent>.',
    );
  }
  return {
    ...(options.changes ? { changeIds: options.changes } : {}),
    ...(options.rebase ? { rebase: true } : {}),
    ...(options.overrideReason ? { override: { reason: options.overrideReason } } : {}),
    ...(options.rollout !== undefined
      ? { rollout: rolloutBody({ ...options, rollout: options.rollout, guards: options.guard }) }
      : {}),
  };
}

function addActivateCommand(program: Command, io: Io): void {
  program
    .command('activate')
    .description('make an earlier (or later) configuration active again: a roll back')
    .argument('<pipelineId>')
    .argument('<configurationId>')
    .option('--reason <text>', 'why, for the history')
    .action(
      async (pipelineId: string, configurationId: string, options: { reason?: string }, command: Command) => {
        const context = contextOf(io, command);
        const activation = await call(
          context.client.POST('/pipelines/{pipelineId}/configurations/{configurationId}/activate', {
            params: { path: { pipelineId, configurationId } },
            body: options.reason ? { reason: options.reason } : {},
          }),
          context.apiUrl,
        );
        context.print(activation, () => `${activation.summary}\n${fields(activation)}`);
      },
    );
}
