/*
 * The answers that name people beside the ids their records hold: a run, an activation, a rollout.
 * Each `…Name` is the user's email or, for "system", "system"; null when the person's record is
 * gone (docs/decisions.md says when), so a client shows the id instead.
 */
import * as z from 'zod/mini';
import { activationSchema } from './pipelines.ts';
import { rolloutSchema } from './rollouts.ts';
import { synthesisRunSchema } from './runs.ts';

const displayName = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string());

export const namedRunSchema = /* @__PURE__ */ z.extend(synthesisRunSchema, {
  triggeredByName: displayName,
  approvedByName: displayName,
  rejectedByName: displayName,
});
export type NamedRun = z.infer<typeof namedRunSchema>;

export const namedActivationSchema = /* @__PURE__ */ z.extend(activationSchema, {
  activatedByName: displayName,
});
export type NamedActivation = z.infer<typeof namedActivationSchema>;

export const namedRolloutSchema = /* @__PURE__ */ z.extend(rolloutSchema, {
  startedByName: displayName,
  endedByName: displayName,
});
export type NamedRollout = z.infer<typeof namedRolloutSchema>;
