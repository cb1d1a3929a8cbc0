/**
 * The one route table. The CDK stack (lib/api.ts) creates an API Gateway resource, method and
 * Lambda function per route from it, and the local gateway (local/gateway.ts) serves the same
 * routes with the same handler modules. `entry` names a file in lambdas/handlers.
 */
export type TableAccess = 'read' | 'readWrite';

export interface FunctionAccess {
  runs?: TableAccess;
  data?: TableAccess;
  auth?: TableAccess;
  /** Sends synthesis jobs to the queue. */
  sendJobs?: boolean;
  /**
   * Consumes the synthesis queue (its event source grants receive, delete and visibility changes)
   * and needs its URL as SYNTHESIS_QUEUE_URL, to hide a failed job for a backoff of seconds.
   */
  consumesJobs?: boolean;
  /**
   * Signs or verifies session tokens: read access to the session signing key secret and its ARN
   * as SESSION_SECRET_ARN (never the key itself in the environment).
   */
  sessionSecret?: boolean;
  /** Sends email through SES: ses:SendEmail on the sender identity, EMAIL_FROM and APP_URL. */
  sendsEmail?: boolean;
  /** Calls the model API: read access to the Anthropic API key secret and its ARN as ANTHROPIC_SECRET_ARN. */
  callsModel?: boolean;
  /**
   * Sets `lastUsedAt` on API token items of the auth table: dynamodb:UpdateItem limited to
   * leading keys `APITOKEN#*` and the attributes pk, sk, lastUsedAt (the authorizer only).
   */
  recordsTokenUse?: boolean;
}

export interface RouteDefinition {
  method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway path with `{param}` placeholders; a last `{name+}` takes the rest of the path. */
  path: string;
  /** Routes that share an entry share one function (they must then declare the same access). */
  entry: string;
  /** false only for the endpoints DESIGN.md lets through without a credential. */
  authorized: boolean;
  access: FunctionAccess;
}

export const ROUTES: readonly RouteDefinition[] = [
  {
    method: 'POST',
    path: '/pipelines/{pipelineId}/synthesize',
    entry: 'synthesize-pipeline',
    authorized: true,
    // data: idempotency keys are written there.
    access: { runs: 'readWrite', data: 'readWrite', sendJobs: true },
  },
  {
    method: 'GET',
    path: '/synthesis-runs/{id}',
    entry: 'get-synthesis-run',
    authorized: true,
    access: { runs: 'read' },
  },
  { method: 'GET', path: '/me', entry: 'get-me', authorized: true, access: { auth: 'read' } },
  {
    method: 'POST',
    path: '/pipelines',
    entry: 'create-pipeline',
    authorized: true,
    access: { data: 'readWrite' },
  },
  { method: 'GET', path: '/pipelines', entry: 'list-pipelines', authorized: true, access: { data: 'read' } },
  {
    method: 'GET',
    path: '/pipelines/{pipelineId}',
    entry: 'get-pipeline',
    authorized: true,
    access: { data: 'read' },
  },
  {
    method: 'GET',
    path: '/pipelines/{pipelineId}/configurations/{configurationId}',
    entry: 'get-configuration',
    authorized: true,
    access: { data: 'read' },
  },
  {
    method: 'POST',
    path: '/pipelines/{pipelineId}/signals',
    entry: 'record-signals',
    authorized: true,
    access: { data: 'readWrite' },
  },
  {
    method: 'POST',
    path: '/pipelines/{pipelineId}/executions',
    entry: 'record-executions',
    authorized: true,
    access: { data: 'readWrite' },
  },
  {
    method: 'POST',
    path: '/synthesis-runs/{id}/approve',
    entry: 'approve-synthesis-run',
    authorized: true,
    access: { runs: 'readWrite', data: 'readWrite' },
  },
  {
    method: 'POST',
    path: '/synthesis-runs/{id}/reject',
    entry: 'reject-synthesis-run',
    authorized: true,
    access: { runs: 'readWrite' },
  },
  {
    method: 'GET',
    path: '/synthesis-runs/{id}/evidence',
    entry: 'get-synthesis-run-evidence',
    authorized: true,
    access: { runs: 'read', data: 'read' },
  },
  {
    method: 'GET',
    path: '/synthesis-runs/{id}/diff',
    entry: 'get-synthesis-run-diff',
    authorized: true,
    access: { runs: 'read', data: 'read' },
  },
  {
    method: 'GET',
    path: '/pipelines/{pipelineId}/synthesis-runs',
    entry: 'list-synthesis-runs',
    authorized: true,
    access: { runs: 'read', data: 'read' },
  },
  {
    method: 'POST',
    path: '/pipelines/{pipelineId}/configurations/{configurationId}/activate',
    entry: 'activate-configuration',
    authorized: true,
    // runs: only an approved run's proposal may be activated again.
    access: { runs: 'read', data: 'readWrite' },
  },
  {
    method: 'GET',
    path: '/pipelines/{pipelineId}/activations',
    entry: 'list-activations',
    authorized: true,
    access: { data: 'read' },
  },
  // Authentication (DESIGN.md section 5). Only POST /auth/* and the magic-link page go without a credential.
  {
    method: 'POST',
    path: '/auth/login',
    entry: 'log-in',
    authorized: false,
    access: { auth: 'readWrite', sessionSecret: true },
  },
  {
    method: 'POST',
    path: '/auth/refresh',
    entry: 'refresh-session',
    authorized: false,
    access: { auth: 'readWrite', sessionSecret: true },
  },
  {
    method: 'POST',
    path: '/auth/logout',
    entry: 'log-out',
    authorized: false,
    access: { auth: 'readWrite', sessionSecret: true },
  },
  {
    method: 'POST',
    path: '/auth/magic-link',
    entry: 'request-magic-link',
    authorized: false,
    access: { auth: 'readWrite', sendsEmail: true },
  },
  {
    // The page a sign-in email links to; it holds no data and posts the token to .../verify.
    method: 'GET',
    path: '/auth/magic-link',
    entry: 'show-magic-link-page',
    authorized: false,
    access: {},
  },
  {
    method: 'POST',
    path: '/auth/magic-link/verify',
    entry: 'verify-magic-link',
    authorized: false,
    access: { auth: 'readWrite', sessionSecret: true },
  },
  {
    method: 'POST',
    path: '/me/password',
    entry: 'change-password',
    authorized: true,
    access: { auth: 'readWrite' },
  },
  {
    method: 'GET',
    path: '/api-tokens',
    entry: 'list-api-tokens',
    authorized: true,
    access: { auth: 'read' },
  },
  {
    method: 'POST',
    path: '/api-tokens',
    entry: 'create-api-token',
    authorized: true,
    access: { auth: 'readWrite' },
  },
  {
    method: 'DELETE',
    path: '/api-tokens/{id}',
    entry: 'revoke-api-token',
    authorized: true,
    access: { auth: 'readWrite' },
  },
  { method: 'GET', path: '/openapi.json', entry: 'get-openapi', authorized: false, access: {} },
  // The review application (web/): one function serves its HTML shell and its hashed assets,
  // embedded in its bundle. `/app` also answers `/app/` (API Gateway routes both to one resource).
  { method: 'GET', path: '/app', entry: 'serve-app', authorized: false, access: {} },
  { method: 'GET', path: '/app/{proxy+}', entry: 'serve-app', authorized: false, access: {} },
];

// Functions that are not behind a route. Each row is what the CDK stack (lib/) and the local stack
// (local/functions.ts) both build the function from: handler file, access, timeout, event source.

/** A function's settings beyond its access; the defaults are those of every route's function. */
export interface FunctionDefinition {
  entry: string;
  access: FunctionAccess;
  /** Lambda's timeout; HTTP_FUNCTION_TIMEOUT_SECONDS when absent. */
  timeoutSeconds?: number;
  memoryMb?: number;
  /** An SQS event source with ReportBatchItemFailures. */
  eventSource?: { batchSize: number; maxConcurrency?: number };
}

/** The timeout of every route's function: well inside API Gateway's 29 s integration timeout. */
export const HTTP_FUNCTION_TIMEOUT_SECONDS = 10;
export const DEFAULT_MEMORY_MB = 256;

/**
 * The authorizer reads the auth table and writes only API tokens' lastUsedAt, at most about once a
 * minute per token (`recordsTokenUse`: a narrow UpdateItem grant, not write access to the table).
 */
export const AUTHORIZER = {
  entry: 'authorize',
  access: { auth: 'read', sessionSecret: true, recordsTokenUse: true },
  timeoutSeconds: 5,
} satisfies FunctionDefinition;

/** The worker's timeout; the queue's visibility timeout is six times this (AWS's guidance). */
export const WORKER_TIMEOUT_SECONDS = 120;
export const QUEUE_VISIBILITY_TIMEOUT_SECONDS = 6 * WORKER_TIMEOUT_SECONDS;

export const SYNTHESIS_WORKER = {
  entry: 'process-synthesis-jobs',
  access: { runs: 'readWrite', data: 'readWrite', consumesJobs: true, callsModel: true },
  timeoutSeconds: WORKER_TIMEOUT_SECONDS,
  memoryMb: 512,
  // maxConcurrency bounds the concurrent model calls (and the Anthropic rate limit they share).
  eventSource: { batchSize: 5, maxConcurrency: 5 },
} satisfies FunctionDefinition;

/** Seconds the dead-letter handler may run; its queue's visibility timeout is six times this. */
export const DEAD_LETTER_HANDLER_TIMEOUT_SECONDS = 30;
export const DEAD_LETTER_HANDLER = {
  entry: 'fail-dead-synthesis-jobs',
  access: { runs: 'readWrite' },
  timeoutSeconds: DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
  eventSource: { batchSize: 10 },
} satisfies FunctionDefinition;

/** On a schedule: fails runs left pending or generating past STUCK_RUN_AFTER_SECONDS. */
export const RUN_SWEEPER = {
  entry: 'sweep-stuck-runs',
  access: { runs: 'readWrite' },
  timeoutSeconds: 60,
  scheduleMinutes: 5,
} satisfies FunctionDefinition & { scheduleMinutes: number };

/**
 * Receives of a job before it moves to the DLQ. Failed attempts come back after a backoff of
 * 5, 15, 45 and 135 s (lambdas/platform/sqs-batch.ts), so five attempts span about four minutes.
 */
export const MAX_RECEIVE_COUNT = 5;
/**
 * A run still pending or generating this long after it was created cannot finish any more: even
 * if every attempt ran into the worker's timeout and waited out the visibility timeout, its job
 * would be in the DLQ by now. The sweeper fails it.
 */
export const STUCK_RUN_AFTER_SECONDS =
  MAX_RECEIVE_COUNT * QUEUE_VISIBILITY_TIMEOUT_SECONDS + WORKER_TIMEOUT_SECONDS;
