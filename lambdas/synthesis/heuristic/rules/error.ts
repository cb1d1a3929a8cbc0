/**
 * Rule: errors of no more specific kind (and critical signals no other rule recognises). Answered,
 * as a guess, by another retry on the calling slot.
 */
import { collectFaultEvidence } from '../detect.ts';
import type { FaultRule } from '../rule.ts';
import { raiseRetries } from '../settings.ts';
import { actionOn, callingSlot } from '../slots.ts';

export const errorRule: FaultRule = {
  fault: 'error',
  label: 'Errors',
  pattern: /error|fail|exception|crash/,
  detect: (window) => collectFaultEvidence(window, 'error'),
  answer: (finding, { slots }) =>
    actionOn('retries', callingSlot(finding, slots, 'maxRetries'), raiseRetries('error')),
};
