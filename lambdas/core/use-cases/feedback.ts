/*
 * A person's verdict on one execution: Good or Bad, with an optional note, recorded as a
 * `human_feedback` signal citing the execution (value 1 or 0) that names who said it. It is a
 * signal like any: synthesis reads it, the series count it, a guardrail may watch it.
 */
import * as z from 'zod/mini';
import { lookUpNames } from '../people.ts';
import type { PeopleDirectory } from '../ports/people.ts';
import { assertCanWrite, type Principal } from '../principal.ts';
import { boundedString } from '../schemas/common.ts';
import type { Signal } from '../schemas/records.ts';
import type { makeRecordSignals } from './pipelines.ts';
import type { makeGetExecution } from './record-reads.ts';

export const HUMAN_FEEDBACK_KIND = 'human_feedback';

export const feedbackBodySchema = /* @__PURE__ */ z.strictObject({
  rating: /* @__PURE__ */ z.enum(['good', 'bad']),
  note: /* @__PURE__ */ z.optional(/* @__PURE__ */ boundedString(1, 1_000)),
});
export type FeedbackBody = z.infer<typeof feedbackBodySchema>;

export interface FeedbackDeps {
  /** The execution must exist (and be the caller team's, inside its retention window). */
  getExecution: ReturnType<typeof makeGetExecution>;
  record: ReturnType<typeof makeRecordSignals>;
  people: PeopleDirectory;
}

/** How a principal is named: the person's email, and the API token's name when one was used. */
export async function principalName(people: PeopleDirectory, principal: Principal): Promise<string> {
  const names = await lookUpNames(
    people,
    principal.teamId,
    [principal.userId],
    principal.tokenId ? [principal.tokenId] : [],
  );
  const person = names.user(principal.userId) ?? principal.userId;
  if (!principal.tokenId) return person;
  return `${person} (API token "${names.token(principal.tokenId) ?? principal.tokenId}")`;
}

/** Records the feedback signal and answers it. */
export function makeRecordFeedback({ getExecution, record, people }: FeedbackDeps) {
  return async (
    principal: Principal,
    pipelineId: string,
    executionId: string,
    body: FeedbackBody,
  ): Promise<Signal> => {
    // A viewer is refused before anything is read: a 403 whether or not the execution exists.
    assertCanWrite(principal);
    await getExecution(principal, pipelineId, executionId);
    const name = await principalName(people, principal);
    const verdict = body.rating === 'good' ? 'Good' : 'Bad';
    const [signal] = await record(principal, pipelineId, [
      {
        kind: HUMAN_FEEDBACK_KIND,
        severity: body.rating === 'good' ? 'info' : 'warning',
        message: `${verdict}, said ${name}${body.note ? `: ${body.note}` : ''}`,
        executionId,
        value: body.rating === 'good' ? 1 : 0,
        recordedBy: principal.userId,
        recordedByName: name,
      },
    ]);
    return signal as Signal;
  };
}
