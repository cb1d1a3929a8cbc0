/**
 * Rule: transient upstream errors (rate limits, overload, 5xx, dropped connections). Answered by
 * another retry on the calling slot.
 */
import { collectFaultEvidence } from '../detect.ts';
import type { FaultRule } from '../rule.ts';
import { raiseRetries } from '../settings.ts';
import { actionOn, callingSlot } from '../slots.ts';

export const transientRule: FaultRule = {
  fault: 'transient',
  label: 'Transient upstream errors (rate limits, overload, dropped connections)',
  pattern:
    /rate[ _-]?limit|throttl|overload|\b(429|500|502|503|504|529)\b|unavailable|econnreset|econnrefused|connection (reset|refused|error)|socket hang up/,
  detect: (window) => collectFaultEvidence(window, 'transient'),
  answer: (finding, { slots }) =>
    actionOn('retries', callingSlot(finding, slots, 'maxRetries'), raiseRetries('transient')),
};
