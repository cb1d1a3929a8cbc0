/**
 * Abuse and cost limits, with defaults that never get in the way of honest use. One definition for
 * the CDK stack (stack context: -c requestsPerSecondPerCredential=…), the local stack (environment
 * variables of `npm start`) and the handlers (SYNTHESIS_RUNS_PER_TEAM_PER_HOUR).
 */
export interface AbuseLimits {
  /** Sustained requests per second of one credential (API token or session). */
  requestsPerSecondPerCredential: number;
  /** Requests one credential may send at once before the sustained rate applies. */
  burstPerCredential: number;
  /** Requests per minute to /auth/* from one client IP (credential-less endpoints). */
  authRequestsPerMinutePerIp: number;
  /** Synthesis runs one team may start per clock hour (the model bill, the queue). */
  synthesisRunsPerTeamPerHour: number;
  /** API Gateway's stage-wide throttle, all callers together. */
  stageRequestsPerSecond: number;
  stageBurst: number;
}

export const DEFAULT_LIMITS: AbuseLimits = {
  requestsPerSecondPerCredential: 50,
  burstPerCredential: 200,
  authRequestsPerMinutePerIp: 300,
  // A CI job may start 100 at once, several times an hour.
  synthesisRunsPerTeamPerHour: 500,
  // Room for 20 credentials at their full rate; the account's default regional limit is 10,000.
  stageRequestsPerSecond: 1_000,
  stageBurst: 2_000,
};

/** The environment variable (local stack) or context key (CDK) of each limit. */
const LIMIT_VARIABLES: Record<keyof AbuseLimits, string> = {
  requestsPerSecondPerCredential: 'RATE_LIMIT_PER_SECOND',
  burstPerCredential: 'RATE_LIMIT_BURST',
  authRequestsPerMinutePerIp: 'AUTH_RATE_LIMIT_PER_MINUTE',
  synthesisRunsPerTeamPerHour: 'SYNTHESIS_RUNS_PER_TEAM_PER_HOUR',
  stageRequestsPerSecond: 'STAGE_RATE_LIMIT_PER_SECOND',
  stageBurst: 'STAGE_RATE_LIMIT_BURST',
};

/** The limits with each one `read` returns (a positive integer) in place of its default. */
export function limitsFrom(read: (variable: string, field: keyof AbuseLimits) => unknown): AbuseLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [field, variable] of Object.entries(LIMIT_VARIABLES) as [keyof AbuseLimits, string][]) {
    const raw = read(variable, field);
    if (raw === undefined || raw === null || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${variable} must be a positive integer, not ${String(raw)}.`);
    limits[field] = value;
  }
  return limits;
}
