/**
 * The rollout flags of `approve`, parsed strictly before anything is sent: `--steps 5,25,50` and
 * each `--guard metric[:…]` become the request's `rollout.steps` and `rollout.guardrails`, or a
 * usage error (exit 1) that says what to write instead.
 */
import type { operations } from './api-types.ts';

type RolloutBody = NonNullable<
  NonNullable<operations['approve-synthesis-run']['requestBody']>['content']['application/json']['rollout']
>;
export type GuardrailFlag = NonNullable<RolloutBody['guardrails']>[number];

/** As the API allows: at most this many guardrails, and this many steps. */
export const MAX_GUARDS = 5;
export const MAX_STEPS = 10;

/** A signal kind as the API names them (lower case, e.g. relevance, human_feedback). */
const KIND = /^[a-z][a-z0-9_-]{0,63}$/;

const GUARD_USAGE =
  'write --guard failure_rate[:0.01], --guard duration_ms[:100], --guard tokens[:50] or ' +
  '--guard signal:<kind>:higher|lower:<threshold>, e.g. --guard signal:relevance:higher:0.05';

const DIRECTIONS: Record<string, GuardrailFlag['direction']> = {
  higher: 'higher_is_better',
  higher_is_better: 'higher_is_better',
  lower: 'lower_is_better',
  lower_is_better: 'lower_is_better',
};

/** A plain Error: commander's argument parsers throw these, and the CLI reports them as usage errors (exit 1). */
const refuse = (value: string, why: string) => new Error(`--guard ${value}: ${why}; ${GUARD_USAGE}`);

function threshold(value: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // Number('') is 0 and Number('0x10') is 16: only a plain decimal is a threshold.
  if (!/^\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) {
    throw refuse(value, `the threshold "${text}" is not a number ≥ 0`);
  }
  const number = Number(text);
  if (!Number.isFinite(number) || number > 1_000_000_000) {
    throw refuse(value, `the threshold "${text}" is too large`);
  }
  return number;
}

/** One `--guard`: `failure_rate:0.01`, `duration_ms:200`, `tokens:50`, `signal:relevance:higher:0.05`. */
export function parseGuard(value: string): GuardrailFlag {
  const [metric, ...rest] = value.split(':');
  if (metric === 'failure_rate' || metric === 'duration_ms' || metric === 'tokens') {
    if (rest.length > 1) throw refuse(value, `${metric} takes one threshold at most`);
    const limit = threshold(value, rest[0]);
    if (metric === 'failure_rate' && limit !== undefined && limit > 1) {
      throw refuse(value, 'a failure rate threshold is a share from 0 to 1 (0.01 is 1 percentage point)');
    }
    return { metric, ...(limit === undefined ? {} : { threshold: limit }) };
  }
  if (metric === 'signal') {
    const [kind, direction, text, ...extra] = rest;
    if (kind === undefined || direction === undefined || text === undefined || extra.length > 0) {
      throw refuse(value, 'a signal guard names its kind, which way is better and its threshold');
    }
    if (!KIND.test(kind)) throw refuse(value, `"${kind}" is not a signal kind (lower case, e.g. relevance)`);
    const better = DIRECTIONS[direction];
    if (!better) throw refuse(value, `"${direction}" is not a direction: higher or lower (is better)`);
    return { metric: 'signal', kind, direction: better, threshold: threshold(value, text) as number };
  }
  throw refuse(value, `"${metric}" is not a guarded metric`);
}

/** Commander's collector for the repeatable `--guard`: each one parsed, a metric (or signal kind) once. */
export function collectGuard(value: string, previous: GuardrailFlag[] = []): GuardrailFlag[] {
  const guard = parseGuard(value);
  const name = guard.metric === 'signal' ? `signal:${guard.kind}` : guard.metric;
  if (
    previous.some((other) => (other.metric === 'signal' ? `signal:${other.kind}` : other.metric) === name)
  ) {
    throw new Error(`--guard ${value}: ${name} is guarded twice; give each metric (or signal kind) once`);
  }
  if (previous.length >= MAX_GUARDS) {
    throw new Error(`--guard ${value}: at most ${MAX_GUARDS} guards a rollout`);
  }
  return [...previous, guard];
}

/** `--steps 5,25,50`: whole percents from 1 to 99, each above the one before. */
export function parseSteps(value: string): number[] {
  const parts = value.split(',').map((part) => part.trim());
  const steps = parts.map((part) => (/^\d+$/.test(part) ? Number(part) : Number.NaN));
  const usage = `--steps ${value}: write increasing whole percents from 1 to 99, e.g. --steps 5,25,50`;
  if (steps.some((step) => !Number.isInteger(step) || step < 1 || step > 99)) throw new Error(usage);
  if (steps.some((step, i) => i > 0 && step <= (steps[i - 1] as number))) throw new Error(usage);
  if (steps.length > MAX_STEPS) throw new Error(`--steps ${value}: at most ${MAX_STEPS} steps`);
  return steps;
}

/** `--min-executions`: a whole number from 30 to 100,000. */
export function parseMinExecutions(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 30 && n <= 100_000)) {
    throw new Error(`--min-executions ${value}: write a whole number of executions from 30 to 100000`);
  }
  return n;
}

/** The `rollout` object of the approve request, from the flags; a usage error names what does not fit. */
export function rolloutBody(options: {
  rollout: number;
  steps?: number[];
  guards?: GuardrailFlag[];
  minExecutions?: number;
  autoPromote?: boolean;
  autoRollback: boolean;
}): RolloutBody {
  const { steps } = options;
  if (steps && steps[0] !== options.rollout) {
    throw new Error(
      `--steps starts at the --rollout percent: --rollout ${options.rollout} --steps ${[options.rollout, ...steps.filter((step) => step > options.rollout)].join(',')}`,
    );
  }
  return {
    percent: options.rollout,
    ...(steps ? { steps } : {}),
    ...(options.guards && options.guards.length > 0 ? { guardrails: options.guards } : {}),
    ...(options.minExecutions !== undefined ? { minExecutions: options.minExecutions } : {}),
    ...(options.autoPromote ? { autoPromote: true } : {}),
    ...(options.autoRollback ? {} : { autoRollback: false }),
  };
}
