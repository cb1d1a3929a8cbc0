/**
 * heuristic-v1's table of fault rules, one row per fault. The order is the precedence of their
 * patterns: the first that matches names a signal's fault, so "timed out" is never an "error".
 */
import type { FaultRule } from './rule.ts';
import { errorRule } from './rules/error.ts';
import { formatRule } from './rules/format.ts';
import { latencyRule } from './rules/latency.ts';
import { qualityRule } from './rules/quality.ts';
import { timeoutRule } from './rules/timeout.ts';
import { transientRule } from './rules/transient.ts';
import { truncationRule } from './rules/truncation.ts';

export const HEURISTIC_RULES: readonly FaultRule[] = [
  truncationRule,
  timeoutRule,
  formatRule,
  transientRule,
  latencyRule,
  qualityRule,
  errorRule,
];
