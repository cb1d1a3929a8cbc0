/**
 * The arms a replay runs: the base, the candidate and, with `--per-change`, each change of the run
 * alone on the base (`change:<id>`: the base with that change's patch merged into its slot); and
 * the held-out figures in words.
 */
import { applyMergePatch, type JsonObject } from '../lambdas/synthesis/merge-patch.ts';
import { call } from './api.ts';
import type { ResponseBody } from './client.ts';
import type { Context } from './context.ts';

type EvaluationSet = ResponseBody<'get-synthesis-run-evaluation-set'>;
type Configuration = EvaluationSet['baseConfiguration'];
type Summary = NonNullable<ResponseBody<'record-synthesis-run-evaluations'>['evaluation']>;
type Change = ResponseBody<'get-synthesis-run'>['changes'][number];

/** The base with one change applied: the configuration that approving that change alone would ship. */
export function withChange(base: Configuration, change: Change): Configuration {
  return {
    ...base,
    slots: base.slots.map((slot) =>
      slot.id === change.slotId
        ? { ...slot, settings: applyMergePatch(slot.settings as JsonObject, change.patch as JsonObject) }
        : slot,
    ),
  };
}

/**
 * Each arm to replay and the configuration the runner gets for it. `changes` is the run's changes
 * when the caller already read the run (optimize), so per-change arms cost no extra request.
 */
export async function armsOf(
  context: Context,
  runId: string,
  set: EvaluationSet,
  perChange: boolean,
  changes?: readonly Change[],
): Promise<Map<string, Configuration>> {
  const arms = new Map<string, Configuration>([
    ['base', set.baseConfiguration],
    ['candidate', set.candidateConfiguration],
  ]);
  if (!perChange) return arms;
  const known =
    changes ??
    (
      await call(
        context.client.GET('/synthesis-runs/{id}', { params: { path: { id: runId } } }),
        context.apiUrl,
      )
    ).changes;
  for (const change of known) arms.set(`change:${change.id}`, withChange(set.baseConfiguration, change));
  return arms;
}

/** The held-out cases' figures in a sentence: the ones that count. */
export function describeHeldOut(heldOut: NonNullable<Summary['heldOut']>): string {
  return (
    `Held out (never shown to a synthesis): ${heldOut.evaluated} of ${heldOut.cases} evaluated, ` +
    `${heldOut.fixed.length} of ${heldOut.baseFailed} base failures fixed, ${heldOut.regressed.length} broken, ` +
    `${heldOut.stillFailing.length} still failing.`
  );
}
