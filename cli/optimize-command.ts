/**
 * `pipeline-synthesis optimize <pipelineId> --exec "<runner>"`: synthesize → wait → evaluate →
 * refine, round after round, until two rounds in a row improve nothing, every case passes, or the
 * rounds or the budget run out; a row per round (held-out figures first) and the best run. Never approves.
 */
import type { Command } from 'commander';
import { call } from './api.ts';
import { armsOf } from './change-arms.ts';
import type { ResponseBody, SynthesisHandler, SynthesisRun } from './client.ts';
import { type Context, contextOf, type Io } from './context.ts';
import {
  DEFAULT_TIMEOUT_PER_CASE_SECONDS,
  type EvaluateOptions,
  ResultPoster,
  replay,
} from './evaluate-command.ts';
import { CliFailure, EXIT } from './failures.ts';
import { table } from './render.ts';
import { abortableSleep, waitForRun } from './wait.ts';

type Summary = NonNullable<ResponseBody<'record-synthesis-run-evaluations'>['evaluation']>;
type StopReason = 'no-improvement' | 'all-pass' | 'rounds' | 'budget' | 'interrupted';

export const DEFAULT_ROUNDS = 4;
const MAX_ROUNDS = 19;
const WAIT_SECONDS = 600;

interface OptimizeOptions extends EvaluateOptions {
  rounds: number;
  handler?: string;
  budgetUsd?: number;
}

export type RoundRow = {
  round: number;
  runId: string;
  changes: number;
  heldOutFixed: number;
  heldOutBroken: number;
  heldOutStillFailing: number;
  fixed: number;
  broken: number;
  stillFailing: number;
  costUsd: number;
};

const number = (name: string, check: (value: number) => boolean, rule: string) => (value: string) => {
  const parsed = Number(value);
  if (!check(parsed)) throw new Error(`${name} ${rule}`);
  return parsed;
};

function rowOf(round: number, run: SynthesisRun, summary: Summary | undefined): RoundRow {
  const held = summary?.heldOut;
  const stillFailing = summary ? summary.candidate.failed - summary.regressed.length : 0;
  return {
    round,
    runId: run.id,
    changes: run.changes.length,
    heldOutFixed: held?.fixed.length ?? 0,
    heldOutBroken: held?.regressed.length ?? 0,
    heldOutStillFailing: held?.stillFailing.length ?? 0,
    fixed: summary?.fixed.length ?? 0,
    broken: summary?.regressed.length ?? 0,
    stillFailing,
    costUsd: run.costUsd ?? run.estimatedCostUsd ?? 0,
  };
}

/**
 * Whether the next round would take the total past the budget: the last round's cost is the
 * forecast of the next (a refinement's prompt is the same size give or take its evaluation section).
 */
export function budgetStops(
  rows: readonly Pick<RoundRow, 'costUsd'>[],
  budgetUsd: number | undefined,
): boolean {
  if (budgetUsd === undefined) return false;
  const spent = rows.reduce((sum, row) => sum + row.costUsd, 0);
  return spent + (rows.at(-1)?.costUsd ?? 0) > budgetUsd;
}

/** A round improved on the one before when it fixed a case that one did not, or stopped breaking one. */
export function improved(before: Summary, after: Summary): boolean {
  const fixedBefore = new Set(before.fixed);
  const brokenAfter = new Set(after.regressed);
  return (
    after.fixed.some((id) => !fixedBefore.has(id)) || before.regressed.some((id) => !brokenAfter.has(id))
  );
}

async function startRound(
  context: Context,
  pipelineId: string,
  options: OptimizeOptions,
  parentRunId?: string,
) {
  const started = await call(
    context.client.POST('/pipelines/{pipelineId}/synthesize', {
      params: {
        path: { pipelineId },
        // Running optimize again after a stop refines the same parent once, not twice.
        ...(parentRunId ? { header: { 'Idempotency-Key': `optimize-refine-${parentRunId}` } } : {}),
      },
      body: {
        ...(options.handler ? { synthesisHandler: options.handler as SynthesisHandler } : {}),
        ...(parentRunId ? { parentRunId } : {}),
      },
    }),
    context.apiUrl,
  );
  const getRun = () =>
    call(
      context.client.GET('/synthesis-runs/{id}', { params: { path: { id: started.id } } }),
      context.apiUrl,
    );
  // The POST's answer names no people: the first read gives the run as GET shows it.
  const outcome = await waitForRun(await getRun(), {
    getRun,
    sleep: abortableSleep,
    now: Date.now,
    signal: context.io.interrupt,
    timeoutMs: WAIT_SECONDS * 1000,
  });
  const { run } = outcome;
  if (outcome.kind === 'failed')
    throw new CliFailure(EXIT.runFailed, `Run ${run.id} failed: ${run.errorMessage ?? 'no reason given'}`);
  if (outcome.kind === 'timedOut')
    throw new CliFailure(
      EXIT.timedOut,
      `Run ${run.id} is still ${run.status} after ${WAIT_SECONDS} s; it goes on.`,
    );
  if (outcome.kind === 'interrupted')
    throw new CliFailure(EXIT.interrupted, `Stopped waiting; run ${run.id} (${run.status}) goes on.`);
  return run;
}

/** Replays the run's set (with --per-change its change arms too) and posts every result that finished. */
async function evaluateRound(context: Context, run: SynthesisRun, options: OptimizeOptions) {
  const set = await call(
    context.client.GET('/synthesis-runs/{id}/evaluation-set', { params: { path: { id: run.id } } }),
    context.apiUrl,
  );
  const poster = new ResultPoster(context, run.id);
  const arms = await armsOf(context, run.id, set, options.perChange === true, run.changes);
  await replay(context, set, arms, options, poster);
  if (poster.failure) throw poster.failure;
  return poster.summary;
}

async function optimize(context: Context, pipelineId: string, options: OptimizeOptions): Promise<void> {
  const rows: RoundRow[] = [];
  let previous: Summary | undefined;
  let flatRounds = 0;
  let stopReason: StopReason = 'rounds';
  for (let round = 1; round <= options.rounds; round++) {
    if (budgetStops(rows, options.budgetUsd)) {
      stopReason = 'budget';
      break;
    }
    const run = await startRound(context, pipelineId, options, rows.at(-1)?.runId);
    const summary = await evaluateRound(context, run, options);
    const row = rowOf(round, run, summary);
    rows.push(row);
    context.print(row, () => table([row], Object.keys(row)));
    if (context.io.interrupt.aborted) {
      stopReason = 'interrupted';
      break;
    }
    if (summary && summary.evaluated === summary.cases && summary.candidate.failed === 0) {
      stopReason = 'all-pass';
      break;
    }
    // A refinement that overshot is followed by one that backs off halfway; that round may fix
    // nothing yet while narrowing the value, so only two flat rounds in a row end the search.
    flatRounds = previous && summary && !improved(previous, summary) ? flatRounds + 1 : 0;
    if (flatRounds >= 2) {
      stopReason = 'no-improvement';
      break;
    }
    previous = summary;
  }
  await report(context, pipelineId, rows, stopReason);
}

async function report(context: Context, pipelineId: string, rows: RoundRow[], stopReason: StopReason) {
  const first = rows[0];
  const chain = first
    ? await call(
        context.client.GET('/synthesis-runs/{id}/chain', { params: { path: { id: first.runId } } }),
        context.apiUrl,
      )
    : undefined;
  const costUsd = Math.round(rows.reduce((sum, row) => sum + row.costUsd, 0) * 1e6) / 1e6;
  const summary = { pipelineId, rounds: rows, bestRunId: chain?.bestRunId ?? null, stopReason, costUsd };
  context.print(summary, () =>
    [
      table(rows, Object.keys(first ?? { round: 0 })),
      '',
      `Stopped: ${stopReason}. ${summary.bestRunId ? `Best run: ${summary.bestRunId} (generated, not approved; review it with pipeline-synthesis runs show ${summary.bestRunId}).` : 'No run was evaluated.'}`,
    ].join('\n'),
  );
  if (stopReason === 'interrupted') {
    throw new CliFailure(EXIT.interrupted, 'Stopped by Ctrl-C after posting the results that finished.');
  }
}

export function addOptimizeCommand(program: Command, io: Io): void {
  program
    .command('optimize')
    .description(
      'synthesize, evaluate and refine round after round; names the best run and never approves it',
    )
    .argument('<pipelineId>')
    .requiredOption(
      '--exec <command>',
      'the runner, as for evaluate: reads {arm, configuration, case}, prints {passed, …}',
    )
    .option(
      '--rounds <n>',
      `at most this many rounds (default ${DEFAULT_ROUNDS})`,
      number(
        '--rounds',
        (v) => Number.isInteger(v) && v >= 1 && v <= MAX_ROUNDS,
        `must be a whole number from 1 to ${MAX_ROUNDS}`,
      ),
      DEFAULT_ROUNDS,
    )
    .option('--handler <name>', 'heuristic-v1 or claude-v1 (default: the deployment default)')
    .option('--per-change', 'also replay each change alone (arms change:<id>)')
    .option(
      '--budget-usd <usd>',
      'stop before a round whose forecast cost would take the total past this',
      number('--budget-usd', (v) => Number.isFinite(v) && v >= 0, 'must be an amount in USD ≥ 0'),
    )
    .option(
      '--concurrency <n>',
      'runner processes at once (default: the CPUs)',
      number('--concurrency', (v) => Number.isInteger(v) && v >= 1, 'must be a whole number ≥ 1'),
    )
    .option(
      '--timeout-per-case <seconds>',
      `a runner still going after this long fails its case (default ${DEFAULT_TIMEOUT_PER_CASE_SECONDS})`,
      number('--timeout-per-case', (v) => Number.isFinite(v) && v > 0, 'must be a number of seconds > 0'),
      DEFAULT_TIMEOUT_PER_CASE_SECONDS,
    )
    .action(async (pipelineId: string, options: OptimizeOptions, command: Command) => {
      await optimize(contextOf(io, command), pipelineId, options);
    });
}
