/** Small builders for the heuristic's unit tests: slots, signals, runs, a context and its window. */
import type { SynthesisContext } from '../../../../lambdas/core/ports/synthesis.ts';
import type { Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import { type Finding, noEvidence } from '../../../../lambdas/synthesis/heuristic/detect.ts';
import type {
  Action,
  FaultEvidence,
  FaultRule,
  FaultWindow,
} from '../../../../lambdas/synthesis/heuristic/rule.ts';
import { HEURISTIC_RULES } from '../../../../lambdas/synthesis/heuristic/rules.ts';
import { readWindow } from '../../../../lambdas/synthesis/heuristic/window.ts';

export const slot = (id: string, kind: string, settings: Slot['settings'] = {}): Slot => ({
  id,
  name: id,
  kind,
  settings,
});

export const signal = (
  id: string,
  fields: Partial<Signal> & Pick<Signal, 'message'>,
  minute = 0,
): Signal => ({
  id,
  pipelineId: 'p-1',
  kind: 'error',
  severity: 'warning',
  occurredAt: new Date(Date.UTC(2025, 2, 1, 12, minute)).toISOString(),
  ...fields,
});

type SlotResult = NonNullable<Execution['slotResults']>[number];
export const ok = (slotId: string, durationMs = 100): SlotResult => ({
  slotId,
  status: 'succeeded',
  durationMs,
});
export const failed = (slotId: string, error?: string, durationMs = 100): SlotResult => ({
  slotId,
  status: 'failed',
  durationMs,
  ...(error === undefined ? {} : { error }),
});

/** Run `id`, `minute` minutes after 10:00; failed when one of its slots failed unless told. */
export const execution = (
  id: string,
  minute: number,
  slotResults: SlotResult[] | undefined,
  overrides: Partial<Execution> = {},
): Execution => ({
  id,
  pipelineId: 'p-1',
  configurationId: 'c-1',
  status: slotResults?.some((result) => result.status === 'failed') ? 'failed' : 'succeeded',
  durationMs: 1_000,
  startedAt: new Date(Date.UTC(2025, 2, 1, 10, minute)).toISOString(),
  ...(slotResults === undefined ? {} : { slotResults }),
  ...overrides,
});

/** `count` runs of the slot; the first `failing` fail there with `error`; each takes `durationMs`. */
export const slotRuns = (
  slotId: string,
  count: number,
  failing = 0,
  error = 'failed',
  durationMs = 100,
): Execution[] =>
  Array.from({ length: count }, (_, index) =>
    execution(`${slotId}-r${index}`, index, [
      index < failing ? failed(slotId, error, durationMs) : ok(slotId, durationMs),
    ]),
  );

export const context = (
  slots: Slot[],
  signals: Signal[] = [],
  executions: Execution[] = [],
): SynthesisContext => ({
  pipeline: {
    id: 'p-1',
    teamId: 't-1',
    name: 'Pipeline',
    activeConfigurationId: 'c-1',
    createdAt: '2025-03-01T00:00:00Z',
  },
  baseConfiguration: {
    id: 'c-1',
    pipelineId: 'p-1',
    version: 1,
    slots,
    source: 'manual',
    createdAt: '2025-03-01T00:00:00Z',
    createdBy: 'u-1',
  },
  signals,
  executions,
});

export const windowOf = (ctx: SynthesisContext): FaultWindow => readWindow(ctx, HEURISTIC_RULES).window;

/** What a rule finds in a context. */
export const detect = (rule: FaultRule, ctx: SynthesisContext): FaultEvidence[] => rule.detect(windowOf(ctx));

/** A finding of `rule` with only the given evidence. */
export const evidence = (fields: Partial<FaultEvidence> = {}): FaultEvidence => ({
  ...noEvidence(undefined),
  ...fields,
});
export const finding = (rule: FaultRule, fields: Partial<FaultEvidence> = {}): Finding => ({
  rule,
  evidence: evidence(fields),
});

/** The rule's actions for a finding, with nothing raised elsewhere unless told. */
export const answer = (
  rule: FaultRule,
  fields: Partial<FaultEvidence>,
  slots: readonly Slot[],
  raised: readonly string[] = [],
): Action[] =>
  rule.answer(evidence(fields), {
    slots,
    isRaised: (setting, slotId) => raised.includes(`${setting}|${slotId}`),
  });

/** The only action of a rule's answer, built against `settings` (its slot's own when not given). */
export const buildOnly = (actions: Action[], settings?: Record<string, unknown>) => {
  if (actions.length !== 1) throw new Error(`expected one action, got ${actions.length}`);
  const [action] = actions as [Action];
  return action.build(settings ?? action.slot.settings);
};
