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
  /**
   * Sustained evaluations per second of one team (serving-configuration and OFREP, which a
   * pipeline may call on every one of its requests), counted apart from the rate above: on AWS the
   * throttle of the evaluation usage plan, which counts each team's API key (lib/api.ts).
   */
  servingRequestsPerSecondPerTeam: number;
  servingBurstPerTeam: number;
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
  // A pipeline that reads its configuration on each of its requests at 500 a second, twice over.
  servingRequestsPerSecondPerTeam: 1_000,
  servingBurstPerTeam: 2_000,
  // Room for 20 credentials at their full rate and two teams evaluating at their ceiling; the
  // account's default regional limit is 10,000 (burst 5,000).
  stageRequestsPerSecond: 3_000,
  stageBurst: 5_000,
};

/**
 * An operation's path template (`/pipelines/{pipelineId}/serving-configuration`) as an anchored
 * regular expression of the request paths of exactly that route, after `prefix` (the stage's
 * `/<stage>` as WAF sees the path on AWS; none locally): a parameter is one segment, so
 * `/pipelines/p/executions/serving-configuration` (an execution's id) is not a match.
 */
export function routePattern(template: string, prefix = ''): string {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const path = template
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : literal(part)))
    .join('');
  return `^${literal(prefix)}${path}$`;
}

/** Whether a request path is one of the evaluation routes (operation declarations' `rateLimit: 'evaluation'`). */
export function evaluationRouteMatcher(templates: readonly string[]): (path: string) => boolean {
  const patterns = templates.map((template) => new RegExp(routePattern(template)));
  return (path) => patterns.some((pattern) => pattern.test(path));
}

/** The environment variable (local stack) or context key (CDK) of each limit. */
const LIMIT_VARIABLES: Record<keyof AbuseLimits, string> = {
  requestsPerSecondPerCredential: 'RATE_LIMIT_PER_SECOND',
  burstPerCredential: 'RATE_LIMIT_BURST',
  authRequestsPerMinutePerIp: 'AUTH_RATE_LIMIT_PER_MINUTE',
  synthesisRunsPerTeamPerHour: 'SYNTHESIS_RUNS_PER_TEAM_PER_HOUR',
  servingRequestsPerSecondPerTeam: 'SERVING_RATE_LIMIT_PER_SECOND',
  servingBurstPerTeam: 'SERVING_RATE_LIMIT_BURST',
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
