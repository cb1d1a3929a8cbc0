/**
 * What a function may reach (its access) and the functions that are not API operations: the
 * authorizer, the synthesis worker, the dead-letter handler and the sweeper. The API operations'
 * functions are declared by their operation modules (lambdas/operations/); the CDK stack and the
 * local stack build both kinds from these declarations, with the same grants and variables.
 */
import { CARRIED_EVENT_ATTRIBUTE } from './store/table-definitions.ts';

/** 'write': puts, updates and deletes without reading (the relay of carried events). */
export type TableAccess = 'read' | 'write' | 'readWrite';

export interface FunctionAccess {
  runs?: TableAccess;
  data?: TableAccess;
  auth?: TableAccess;
  /** The events table (outbox and audit log): 'readWrite' to write events with changes. */
  events?: TableAccess;
  /** The settings table (a pipeline's approval rules). */
  settings?: TableAccess;
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
  /** Sends data-lifecycle jobs (a pipeline's deletion) to the lifecycle queue: LIFECYCLE_QUEUE_URL. */
  sendsLifecycleJobs?: boolean;
  /** Consumes the lifecycle queue (its event source) and re-queues a job that has more steps. */
  consumesLifecycleJobs?: boolean;
  /** Sends email through SES: ses:SendEmail on the sender identity, EMAIL_FROM and APP_URL. */
  sendsEmail?: boolean;
  /** Calls the model API: read access to the Anthropic API key secret and its ARN as ANTHROPIC_SECRET_ARN. */
  callsModel?: boolean;
  /**
   * Sets `lastUsedAt` on API token items of the auth table: dynamodb:UpdateItem limited to
   * leading keys `APITOKEN#*` and the attributes pk, sk, lastUsedAt (the authorizer only).
   */
  recordsTokenUse?: boolean;
  /**
   * Seals or opens webhook secrets and checks webhook URLs: read access to the webhook secret key
   * and its ARN as WEBHOOK_SECRET_KEY_ARN (locally WEBHOOK_SECRET_KEY and ALLOW_LOCAL_WEBHOOK_URLS).
   */
  webhookSecretKey?: boolean;
  /** Queues webhook deliveries (WEBHOOK_QUEUE_URL) and puts events on the event bus (EVENT_BUS_NAME). */
  fansOutEvents?: boolean;
  /**
   * Consumes the webhook queue (its event source grants receive, delete and visibility changes)
   * and needs its URL as WEBHOOK_QUEUE_URL, to hide a failed delivery until its next attempt.
   */
  deliversWebhooks?: boolean;
  /** Asks for a rollout to be judged: sqs:SendMessage on the guardrail queue, GUARDRAIL_QUEUE_URL. */
  sendsGuardrailChecks?: boolean;
  /**
   * Consumes the guardrail queue (its event source grants receive and delete) and needs its URL as
   * GUARDRAIL_QUEUE_URL, to hide a check that failed for a moment for a backoff of seconds.
   */
  consumesGuardrailChecks?: boolean;
}

/**
 * A function that is not an API operation (lambdas/handlers/<entry>.ts): what the CDK stack (lib/)
 * and the local stack (local/functions.ts) both build it from.
 */
export interface FunctionDefinition {
  entry: string;
  access: FunctionAccess;
  /** Lambda's timeout; HTTP_FUNCTION_TIMEOUT_SECONDS when absent. */
  timeoutSeconds?: number;
  memoryMb?: number;
  /** An SQS event source with ReportBatchItemFailures. */
  eventSource?: {
    batchSize: number;
    maxConcurrency?: number;
    /** Gathers records this long before invoking (SQS MaximumBatchingWindowInSeconds; batchSize may then exceed 10). */
    maxBatchingWindowSeconds?: number;
  };
  /**
   * A DynamoDB Stream event source on the table of this id (partial batch failures, bisect, DLQ),
   * invoked only for records of `eventName` and, with `newImageHas`, whose new image holds that
   * attribute (Lambda's filter criteria on AWS, the same test in local/streams/).
   */
  streamSources?: readonly StreamSourceDefinition[];
}

export interface StreamSourceDefinition {
  table: 'Events' | 'Runs' | 'Settings';
  batchSize: number;
  /** Only records of this event name invoke the function (INSERT and MODIFY for a Put that replaces). */
  eventNames: readonly ('INSERT' | 'MODIFY')[];
  /** …and only those whose new image holds this string attribute. */
  newImageHas?: string;
}

/** The timeout of every API operation's function: well inside API Gateway's 29 s integration timeout. */
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
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite', consumesJobs: true, callsModel: true },
  timeoutSeconds: WORKER_TIMEOUT_SECONDS,
  memoryMb: 512,
  // maxConcurrency bounds the concurrent model calls (and the Anthropic rate limit they share).
  eventSource: { batchSize: 5, maxConcurrency: 5 },
} satisfies FunctionDefinition;

/** Seconds the dead-letter handler may run; its queue's visibility timeout is six times this. */
export const DEAD_LETTER_HANDLER_TIMEOUT_SECONDS = 30;
export const DEAD_LETTER_HANDLER = {
  entry: 'fail-dead-synthesis-jobs',
  access: { runs: 'readWrite', events: 'readWrite' },
  timeoutSeconds: DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
  eventSource: { batchSize: 10 },
} satisfies FunctionDefinition;

/**
 * On a schedule: fails runs left pending or generating past STUCK_RUN_AFTER_SECONDS, and judges
 * active rollouts by their guardrails (data: the rollouts and their executions). Every minute, so a
 * rollout that crossed its minimum is judged within a minute.
 */
export const RUN_SWEEPER = {
  entry: 'sweep-stuck-runs',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite' },
  timeoutSeconds: 60,
  scheduleMinutes: 1,
} satisfies FunctionDefinition & { scheduleMinutes: number };

/** Seconds a deletion job may run; it stops in time and queues its next step. */
export const DELETION_JOB_TIMEOUT_SECONDS = 60;

/**
 * The deletion job: removes a deleted pipeline's items in bounded steps, each one re-queued, so
 * a pipeline with a million signals never runs into a timeout (lambdas/store/pipeline-deletion.ts).
 */
export const PIPELINE_DELETER = {
  entry: 'delete-pipeline-data',
  access: { runs: 'readWrite', data: 'readWrite', settings: 'write', consumesLifecycleJobs: true },
  timeoutSeconds: DELETION_JOB_TIMEOUT_SECONDS,
  eventSource: { batchSize: 1, maxConcurrency: 2 },
} satisfies FunctionDefinition;

/**
 * On a schedule: applies shortened retention windows to the records already stored (a key-range
 * Query per pipeline partition, batched deletes, resumable), and re-queues deletions left pending.
 */
export const RETENTION_JOB = {
  entry: 'apply-retention',
  access: { runs: 'read', data: 'readWrite', sendsLifecycleJobs: true },
  timeoutSeconds: 300,
  scheduleMinutes: 60,
} satisfies FunctionDefinition & { scheduleMinutes: number };

/**
 * Receives of a job before it moves to the DLQ. Failed attempts come back after a backoff of
 * 5, 15, 45 and 135 s (lambdas/sqs/sqs-batch.ts), so five attempts span about four minutes.
 */
export const MAX_RECEIVE_COUNT = 5;
/**
 * A run still pending or generating this long after it was created cannot finish any more: even
 * if every attempt ran into the worker's timeout and waited out the visibility timeout, its job
 * would be in the DLQ by now. The sweeper fails it.
 */
export const STUCK_RUN_AFTER_SECONDS =
  MAX_RECEIVE_COUNT * QUEUE_VISIBILITY_TIMEOUT_SECONDS + WORKER_TIMEOUT_SECONDS;

/**
 * The outbox reader: the events table's stream feeds it; it queues one delivery per subscribed
 * webhook and puts every event on the event bus.
 */
export const EVENT_DELIVERER = {
  entry: 'deliver-events',
  access: { data: 'read', fansOutEvents: true },
  timeoutSeconds: 30,
  streamSources: [{ table: 'Events', batchSize: 100, eventNames: ['INSERT'] }],
} satisfies FunctionDefinition;

/**
 * The relay of the events that a change writing one item carries in that item (a run's reject, a
 * pipeline's approval rules): the streams of the runs and the settings tables feed it the writes
 * whose new image holds an event, and it writes each new one into the events table, once, where
 * the deliverer and the audit log find it.
 */
export const EVENT_RELAY = {
  entry: 'relay-carried-events',
  access: { events: 'write' },
  timeoutSeconds: 30,
  streamSources: [
    { table: 'Runs', batchSize: 100, eventNames: ['MODIFY'], newImageHas: CARRIED_EVENT_ATTRIBUTE },
    {
      table: 'Settings',
      batchSize: 100,
      eventNames: ['INSERT', 'MODIFY'],
      newImageHas: CARRIED_EVENT_ATTRIBUTE,
    },
  ],
} satisfies FunctionDefinition;

/** Seconds one webhook batch may take: every POST of the batch runs at once, each within 10 s. */
export const WEBHOOK_DELIVERER_TIMEOUT_SECONDS = 30;
export const WEBHOOK_QUEUE_VISIBILITY_TIMEOUT_SECONDS = 6 * WEBHOOK_DELIVERER_TIMEOUT_SECONDS;
/**
 * Receives of a delivery before its DLQ: the 8 scheduled attempts (webhooks/deliver.ts
 * MAX_ATTEMPTS) end the message themselves; this only catches a deliverer that keeps crashing.
 */
export const WEBHOOK_MAX_RECEIVE_COUNT = 12;

/** One attempt per queued delivery; a failed one waits for its next time on the schedule. */
export const WEBHOOK_DELIVERER = {
  entry: 'deliver-webhooks',
  access: { data: 'readWrite', webhookSecretKey: true, deliversWebhooks: true },
  timeoutSeconds: WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
  eventSource: { batchSize: 10, maxConcurrency: 10 },
} satisfies FunctionDefinition;

/** Seconds one guardrail batch may take: one judgement per distinct rollout it names. */
export const GUARDRAIL_JUDGE_TIMEOUT_SECONDS = 30;
export const GUARDRAIL_QUEUE_VISIBILITY_TIMEOUT_SECONDS = 6 * GUARDRAIL_JUDGE_TIMEOUT_SECONDS;

/**
 * The per-batch guardrail (core/use-cases/guardrail-checks.ts): POST …/executions queues a check
 * for an active rollout it recorded executions of; this judges each rollout a batch names once.
 * Bursts coalesce in the event source: it gathers checks for up to 5 s (or 100 of them) before
 * invoking, and at most 2 invocations run at once, so 100 batches a second of one pipeline cost
 * about one judgement per poller every 5 s instead of 100 a second. The sweeper stays the backstop.
 */
export const GUARDRAIL_JUDGE = {
  entry: 'judge-rollouts',
  // Runs: the approval's touched slots, for a rollout judged before its effect was ever read.
  access: { runs: 'read', data: 'readWrite', events: 'readWrite', consumesGuardrailChecks: true },
  timeoutSeconds: GUARDRAIL_JUDGE_TIMEOUT_SECONDS,
  eventSource: { batchSize: 100, maxConcurrency: 2, maxBatchingWindowSeconds: 5 },
} satisfies FunctionDefinition;
