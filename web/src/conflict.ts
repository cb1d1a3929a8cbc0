/**
 * A 409 on approve or reject in words: what happened (someone decided first, or the pipeline's
 * active configuration moved on) and what to do now. Pure, tested in test/unit/web.
 */
import { formatTime } from './format.ts';
import type { Run } from './types.ts';

export interface ConflictExplanation {
  title: string;
  detail: string;
  next: string;
}

export interface ConflictContext {
  action: 'approve' | 'reject';
  /** The run as it is now, read again after the 409. */
  run: Run;
  /** The signed-in user, to say "you" instead of an id. */
  userId: string;
  /** The pipeline's active configuration now, and the versions involved when known. */
  activeConfigurationId: string | undefined;
  activeVersion: number | undefined;
  baseVersion: number | undefined;
}

const who = (userId: string | null, me: string) =>
  userId === null ? 'someone' : userId === me ? 'you' : `another reviewer (${userId})`;

const version = (number: number | undefined, fallback: string) =>
  number === undefined ? fallback : `version ${number}`;

export function explainConflict(context: ConflictContext): ConflictExplanation {
  const { run } = context;
  if (run.status === 'approved') {
    return {
      title: 'This proposal was already approved',
      detail: `It was approved by ${who(run.approvedBy, context.userId)} on ${formatTime(run.approvedAt)}, before your decision reached the server.`,
      next: 'Nothing is left to decide here. Open the pipeline to see its active configuration.',
    };
  }
  if (run.status === 'rejected') {
    return {
      title: 'This proposal was already rejected',
      detail: `It was rejected by ${who(run.rejectedBy, context.userId)} on ${formatTime(run.rejectedAt)}${
        run.rejectionReason ? ` (reason: “${run.rejectionReason}”)` : ''
      }, before your decision reached the server.`,
      next: 'If the pipeline still needs a change, start a new synthesis.',
    };
  }
  if (run.status === 'generated' && context.action === 'approve') {
    const moved =
      context.activeConfigurationId !== undefined &&
      context.activeConfigurationId !== run.baseConfigurationId;
    return {
      title: 'The pipeline changed since this proposal was made',
      detail: moved
        ? `This proposal was made from ${version(context.baseVersion, 'an earlier configuration')}, but ${version(
            context.activeVersion,
            'another configuration',
          )} is active now: someone approved another proposal or rolled back in the meantime. Approving this one would silently undo that change, so nothing was changed.`
        : 'The active configuration changed while you were deciding, so nothing was changed.',
      next: moved
        ? 'Approve again with “Rebase onto the configuration active now” checked to apply the chosen changes on top of it (a setting that moved since is refused and named), start a new synthesis from the current configuration, or reject this proposal.'
        : 'Start a new synthesis from the current configuration, or reject this proposal.',
    };
  }
  return {
    title: `This run is ${run.status}`,
    detail: `Only a generated proposal can be ${context.action === 'approve' ? 'approved' : 'rejected'}, and this run is ${run.status}.`,
    next: 'Reload the run to see where it stands.',
  };
}
