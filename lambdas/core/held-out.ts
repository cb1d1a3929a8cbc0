/*
 * The held-out part of an evaluation set: one case in five, chosen once per chain from the chain's
 * first run id, so that no synthesis of the chain learns from the cases its result is judged on.
 */
import { createHash } from 'node:crypto';
import type { EvaluationCaseRef } from './evaluation.ts';

/** One case in this many is held out. */
export const HELD_OUT_EVERY = 5;

const rank = (rootRunId: string, executionId: string) =>
  createHash('sha256').update(`${rootRunId}#${executionId}`).digest('hex');

/**
 * The set with its held-out cases marked: ⌊cases / 5⌋ of them, drawn from the cases no finding
 * cited (the first run was shown those), failed and succeeded in proportion, each stratum in the
 * order of a hash of the chain's first run id and the case: the same chain always draws the same.
 */
export function holdOut(refs: readonly EvaluationCaseRef[], rootRunId: string): EvaluationCaseRef[] {
  const wanted = Math.floor(refs.length / HELD_OUT_EVERY);
  const open = refs.filter((ref) => ref.reason !== 'cited');
  const chosen = new Set<string>();
  for (const reason of ['failed', 'succeeded'] as const) {
    const stratum = open.filter((ref) => ref.reason === reason);
    const share = open.length === 0 ? 0 : Math.round((wanted * stratum.length) / open.length);
    stratum
      .map((ref) => ({ id: ref.executionId, order: rank(rootRunId, ref.executionId) }))
      .sort((a, b) => a.order.localeCompare(b.order))
      .slice(0, share)
      .forEach(({ id }) => {
        chosen.add(id);
      });
  }
  return refs.map((ref) => ({ ...ref, heldOut: chosen.has(ref.executionId) }));
}
