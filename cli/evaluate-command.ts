/**
 * `pipeline-synthesis evaluate <runId> --exec "<command>"`: replays a run's evaluation set on the
 * base and the proposed configuration with the team's own runner, one process per case and arm,
 * posts the results in batches as they finish, prints the table, and exits 5 when a case regressed.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { call } from './api.ts';
import { armsOf, describeHeldOut } from './change-arms.ts';
import type { ResponseBody } from './client.ts';
import { type Context, contextOf, type Io } from './context.ts';
import { CliFailure, EXIT } from './failures.ts';
import { duration, plural, table } from './render.ts';

type EvaluationSet = ResponseBody<'get-synthesis-run-evaluation-set'>;
type EvaluationCase = EvaluationSet['cases'][number];
type Summary = ResponseBody<'record-synthesis-run-evaluations'>['evaluation'];
/** `base`, `candidate`, or `change:<id>` (the base with that change alone, `--per-change`). */
type Arm = string;
type Configuration = EvaluationSet['baseConfiguration'];

/** A runner's answer for one case and arm, as posted. */
export interface CaseResult {
  executionId: string;
  arm: Arm;
  passed: boolean;
  score?: number;
  durationMs?: number;
  costUsd?: number;
  detail?: string;
}

/** Results a POST carries at most (the API's batch limit), and how long a partial batch may wait. */
export const POST_BATCH = 100;
export const FLUSH_INTERVAL_MS = 5_000;
const DETAIL_CHARS = 4_000;
export const DEFAULT_TIMEOUT_PER_CASE_SECONDS = 300;

function parsePositiveInt(name: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`${name} must be a whole number ≥ 1`);
    return parsed;
  };
}

function parseTimeout(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error('--timeout-per-case must be a number of seconds > 0');
  return seconds;
}

const tail = (text: string) => (text.length > DETAIL_CHARS ? text.slice(-DETAIL_CHARS) : text).trim();

/**
 * The runner's answer read from its stdout: the last line that is a JSON object (a runner may log
 * before it), with `passed` a boolean; anything else is undefined.
 */
export function parseAnswer(stdout: string): Omit<CaseResult, 'executionId' | 'arm'> | undefined {
  const lines = stdout.trim().split('\n').reverse();
  for (const line of [stdout.trim(), ...lines]) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null || typeof Reflect.get(value, 'passed') !== 'boolean')
      continue;
    const field = (key: string) => Reflect.get(value, key);
    const number = (key: string) => {
      const figure = field(key);
      return typeof figure === 'number' && Number.isFinite(figure) ? figure : undefined;
    };
    const answer: Omit<CaseResult, 'executionId' | 'arm'> = { passed: field('passed') as boolean };
    const score = number('score');
    if (score !== undefined) answer.score = score;
    const durationMs = number('durationMs');
    if (durationMs !== undefined && durationMs >= 0) answer.durationMs = durationMs;
    const costUsd = number('costUsd');
    if (costUsd !== undefined && costUsd >= 0) answer.costUsd = costUsd;
    const detail = field('detail');
    if (typeof detail === 'string' && detail) answer.detail = tail(detail);
    return answer;
  }
  return undefined;
}

interface Running {
  stop(): void;
}

/** Runs the command once with `input` on stdin; a non-zero exit, a timeout or no answer is a failed case. */
function runCase(
  command: string,
  input: unknown,
  timeoutMs: number,
  running: Set<Running>,
): Promise<Omit<CaseResult, 'executionId' | 'arm'>> {
  return new Promise((resolve) => {
    // Its own process group: a timeout or Ctrl-C stops the runner and whatever it started.
    const child = spawn(command, { shell: true, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const handle: Running = { stop: kill };
    running.add(handle);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = tail(stderr + chunk);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(input));
    const finish = (code: number | null, error?: Error) => {
      clearTimeout(timer);
      running.delete(handle);
      if (timedOut) {
        resolve({
          passed: false,
          detail: tail(`timed out after ${timeoutMs / 1000} s${stderr ? `: ${stderr}` : ''}`),
        });
        return;
      }
      if (error || code !== 0) {
        const why = error ? error.message : `exited with ${code === null ? 'a signal' : `code ${code}`}`;
        resolve({ passed: false, detail: tail(stderr || why) });
        return;
      }
      const answer = parseAnswer(stdout);
      resolve(
        answer ?? { passed: false, detail: tail(stderr || 'the runner printed no {"passed": …} answer') },
      );
    };
    child.once('error', (error) => finish(null, error));
    child.once('close', (code) => finish(code));
  });
}

/** Posts results in batches of at most POST_BATCH, one request at a time, in the order they finished. */
export class ResultPoster {
  #buffer: CaseResult[] = [];
  #chain: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  requests = 0;
  summary: Summary | undefined;
  failure: unknown;

  constructor(
    private readonly context: Context,
    private readonly runId: string,
  ) {}

  add(result: CaseResult): void {
    this.#buffer.push(result);
    if (this.#buffer.length >= POST_BATCH) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#buffer.splice(0, POST_BATCH);
    if (batch.length > 0) {
      this.#chain = this.#chain.then(async () => {
        if (this.failure) return;
        this.requests++;
        try {
          const answer = await call(
            this.context.client.POST('/synthesis-runs/{id}/evaluations', {
              params: { path: { id: this.runId } },
              body: { results: batch },
            }),
            this.context.apiUrl,
          );
          this.summary = answer.evaluation;
        } catch (error) {
          this.failure = error;
        }
      });
    }
    if (this.#buffer.length > 0) return this.flush();
    return this.#chain;
  }
}

function verdict(base: CaseResult | undefined, candidate: CaseResult | undefined): string {
  if (!base || !candidate) return 'not run';
  if (base.passed === candidate.passed) return base.passed ? 'passed' : 'failed';
  return candidate.passed ? 'fixed' : 'REGRESSED';
}

const mark = (result: CaseResult | undefined) => (result ? (result.passed ? 'pass' : 'fail') : '-');

export function addEvaluateCommand(program: Command, io: Io): void {
  program
    .command('evaluate')
    .description(
      "replay a run's evaluation set on both configurations with your runner; exit 5 when a case regressed",
    )
    .argument('<runId>')
    .requiredOption(
      '--exec <command>',
      'run once per case and arm: reads {arm, configuration, case} on stdin, prints {passed, score?, durationMs?, costUsd?, detail?}',
    )
    .option(
      '--concurrency <n>',
      'runner processes at once (default: the CPUs)',
      parsePositiveInt('--concurrency'),
    )
    .option(
      '--per-change',
      'also replay each change alone on the base (arms change:<id>): which change fixed or broke what',
    )
    .option(
      '--timeout-per-case <seconds>',
      `a runner still going after this long fails its case (default ${DEFAULT_TIMEOUT_PER_CASE_SECONDS})`,
      parseTimeout,
      DEFAULT_TIMEOUT_PER_CASE_SECONDS,
    )
    .action(async (runId: string, options: EvaluateOptions, command: Command) => {
      const context = contextOf(io, command);
      await evaluate(context, runId, options);
    });
}

export type EvaluateOptions = {
  exec: string;
  concurrency?: number;
  timeoutPerCase: number;
  perChange?: boolean;
};

async function evaluate(context: Context, runId: string, options: EvaluateOptions): Promise<void> {
  const set = await call(
    context.client.GET('/synthesis-runs/{id}/evaluation-set', { params: { path: { id: runId } } }),
    context.apiUrl,
  );
  const poster = new ResultPoster(context, runId);
  const arms = await armsOf(context, runId, set, options.perChange === true);
  const replayed = await replay(context, set, arms, options, poster);
  if (poster.failure) throw poster.failure;
  const summary = poster.summary;
  context.print(
    {
      runId,
      evaluation: summary ?? null,
      results: [...replayed.results.values()],
      requests: poster.requests + 1,
    },
    () => describeEvaluation(set, replayed.results, summary),
  );
  if (context.io.interrupt.aborted) {
    throw new CliFailure(
      EXIT.interrupted,
      `Stopped: ${replayed.done} of ${replayed.runs} runs finished and were posted. Run the command again to replay the rest.`,
    );
  }
  if (summary && summary.regressed.length > 0) {
    throw new CliFailure(
      EXIT.regressed,
      `${plural(summary.regressed.length, 'case')} regressed: ${summary.regressed.join(', ')}`,
    );
  }
}

/**
 * Runs the runner once per case and arm, `concurrency` at once, posting each result as it comes
 * and noting progress every 5 %; Ctrl-C stops the runners and posts what finished.
 */
export async function replay(
  context: Context,
  set: EvaluationSet,
  arms: ReadonlyMap<Arm, Configuration>,
  options: EvaluateOptions,
  poster: ResultPoster,
) {
  const tasks = set.cases.flatMap((evaluationCase) =>
    [...arms.keys()].map((arm) => ({ evaluationCase, arm })),
  );
  const concurrency = options.concurrency ?? Math.max(1, availableParallelism());
  context.note(
    `Replaying ${plural(set.cases.length, 'case')} on base (version ${set.baseConfiguration.version}) and candidate (version ${set.candidateConfiguration.version})${arms.size > 2 ? `, and ${plural(arms.size - 2, 'change')} alone on the base` : ''}: ${tasks.length} runs, ${concurrency} at once.`,
  );
  const results = new Map<string, CaseResult>();
  const running = new Set<Running>();
  const interrupt = context.io.interrupt;
  const stopAll = () => {
    for (const child of running) child.stop();
  };
  interrupt.addEventListener('abort', stopAll, { once: true });
  let next = 0;
  let done = 0;
  let failed = 0;
  let lastProgress = -1;
  const progress = () => {
    const step = Math.floor((done * 20) / Math.max(1, tasks.length));
    if (step === lastProgress && done !== tasks.length) return;
    lastProgress = step;
    context.note(`  ${done}/${tasks.length} runs done, ${failed} failed`);
  };
  const worker = async () => {
    while (next < tasks.length && !interrupt.aborted) {
      const task = tasks[next++] as (typeof tasks)[number];
      const configuration = arms.get(task.arm);
      // The runner gets the case as recorded, not results posted for it before.
      const { results: _earlier, ...recorded } = task.evaluationCase;
      const answer = await runCase(
        options.exec,
        { arm: task.arm, configuration, case: recorded },
        options.timeoutPerCase * 1000,
        running,
      );
      // A run stopped by Ctrl-C has no answer worth keeping.
      if (interrupt.aborted) return;
      const result: CaseResult = { executionId: task.evaluationCase.executionId, arm: task.arm, ...answer };
      results.set(`${result.executionId}#${result.arm}`, result);
      done++;
      if (!result.passed) failed++;
      poster.add(result);
      progress();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  } finally {
    interrupt.removeEventListener('abort', stopAll);
    await poster.flush();
  }
  return { results, done, runs: tasks.length };
}

/** The table of cases (each arm's mark, the verdict, the first line of a failure) and the summary in words. */
export function describeEvaluation(
  set: EvaluationSet,
  results: Map<string, CaseResult>,
  summary: ResultPoster['summary'],
): string {
  const rows = set.cases.map((evaluationCase: EvaluationCase) => {
    const base = results.get(`${evaluationCase.executionId}#base`);
    const candidate = results.get(`${evaluationCase.executionId}#candidate`);
    return {
      execution: evaluationCase.executionId,
      reason: evaluationCase.reason,
      base: mark(base),
      candidate: mark(candidate),
      verdict: verdict(base, candidate),
      detail: (candidate && !candidate.passed
        ? candidate.detail
        : base && !base.passed
          ? base.detail
          : undefined
      )
        ?.split('\n')[0]
        ?.slice(0, 80),
    };
  });
  return [
    table(rows, ['execution', 'reason', 'base', 'candidate', 'verdict', 'detail']),
    '',
    summary
      ? `Evaluated ${summary.evaluated} of ${summary.cases} cases: base ${summary.base.passed} passed, candidate ${summary.candidate.passed} passed; ${summary.fixed.length} fixed, ${summary.regressed.length} regressed.` +
        (summary.durationMsDelta === null
          ? ''
          : ` Duration ${duration(summary.durationMsDelta, true)} a case.`) +
        (summary.costUsdDelta === null ? '' : ` Cost ${signed(summary.costUsdDelta)} USD a case.`)
      : 'No result was posted.',
    ...(summary?.heldOut ? [describeHeldOut(summary.heldOut)] : []),
    ...(summary?.recommendation ? [summary.recommendation.text] : []),
  ].join('\n');
}

const signed = (value: number) => `${value >= 0 ? '+' : ''}${Math.round(value * 1000) / 1000}`;
