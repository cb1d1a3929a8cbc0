/**
 * The thresholds of heuristic-v1's fault rules and the bounds of the changes they propose: how much
 * evidence makes a finding, and how far one change moves a setting.
 */
export const HEURISTIC_V1_LIMITS = {
  findings: 8,
  /** Run failures of one kind in one slot that make a finding without any signal… */
  minRunFailures: 2,
  /** …provided they are at least this share of the slot's runs. */
  minRunFailureRate: 0.1,
  /** A slot whose p90 duration is above this is slow; so is a latency signal with a higher value. */
  slowMs: 20_000,
  minLatencySamples: 5,
  /** Fewer signals and fewer runs than this in the window is thin evidence. */
  thinWindow: 3,
  timeoutCapMs: 600_000,
  minTimeoutMs: 30_000,
  defaultTimeoutMs: 60_000,
  retriesCap: 5,
  defaultRetries: 2,
  maxTokensCap: 32_768,
  defaultMaxTokens: 4_096,
  maxTokensFloorForLatency: 1_024,
  topKFloor: 3,
} as const;
