/**
 * The functions that are not API operations, each declared once with its access
 * (function-access.ts) and its trigger in HANDLERS: a queue, a schedule, table streams, API
 * Gateway's authorizer call, or a deploy. The API operations' functions are declared by their operation modules
 * (lambdas/operations/). The CDK stack and the local stack build both kinds from these declarations
 * by loops, with the same grants, variables and triggers; the queues are lambdas/queues.ts.
 */
import type { FunctionAccess } from './function-access.ts';
import type { QueueName, WorkQueueName } from './queues.ts';
import { CARRIED_EVENT_ATTRIBUTE } from './store/table-definitions.ts';

export type { FunctionAccess, TableAccess } from './function-access.ts';

/** Lambda's SQS event source on a queue of lambdas/queues.ts, with ReportBatchItemFailures. */
export interface QueueTrigger {
  queue: WorkQueueName;
  /** The queue's dead-letter queue instead of the queue itself. */
  deadLetters?: boolean;
  batchSize: number;
  maxConcurrency?: number;
  /** Gathers records this long before invoking (SQS MaximumBatchingWindowInSeconds; batchSize may then exceed 10). */
  maxBatchingWindowSeconds?: number;
  /**
   * Hides a failed message for a backoff of its own (ChangeMessageVisibility), which also needs
   * the queue's URL in its variable; without it a failed message waits out the visibility timeout.
   */
  changesVisibility?: boolean;
}

/**
 * A DynamoDB Stream event source on the table of this id (partial batch failures, bisect, a
 * failure destination), invoked only for records of `eventNames` and, with `newImageHas`, whose new
 * image holds that attribute (Lambda's filter criteria on AWS, the same test in local/streams/).
 */
export interface StreamSourceDefinition {
  table: 'Events' | 'Runs' | 'Settings';
  batchSize: number;
  /** Only records of this event name invoke the function (INSERT and MODIFY for a Put that replaces). */
  eventNames: readonly ('INSERT' | 'MODIFY')[];
  /** …and only those whose new image holds this string attribute. */
  newImageHas?: string;
  /** Where a batch given up on (after its retries) is recorded on AWS; the local stack retries on. */
  onFailure: QueueName;
}

export type HandlerTrigger =
  | QueueTrigger
  /** An EventBridge rule `rate(n minutes)`; locally a timer of the same period. */
  | { schedule: { everyMinutes: number } }
  | { streams: readonly StreamSourceDefinition[] }
  /** API Gateway calls it before every request to an operation that is not public. */
  | { authorizer: true }
  /**
   * CloudFormation calls it on every deploy, as a custom resource of the Provider framework
   * (lib/usage-key-backfill.ts), until it answers done; the local stack has no deploy and never runs it.
   */
  | { deploy: true };

/**
 * A function that is not an API operation (lambdas/handlers/<entry>.ts): what the CDK stack (lib/)
 * and the local stack (local/functions.ts) both build it and its trigger from.
 */
export interface HandlerDefinition {
  /** Its module lambdas/handlers/<entry>.ts, its construct id (PascalCase) and its local name. */
  entry: string;
  /** The Lambda function's description. */
  description: string;
  access: FunctionAccess;
  trigger: HandlerTrigger;
  /** Lambda's timeout. */
  timeoutSeconds: number;
  /** @default DEFAULT_MEMORY_MB */
  memoryMb?: number;
  /**
   * Modules the handler imports on demand, by output name, relative to the repository root: it is
   * then bundled with code splitting, each part a file next to index.mjs (lib/bundling.ts).
   */
  onDemandParts?: Readonly<Record<string, string>>;
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
  description: 'API Gateway REQUEST authorizer: API tokens and sessions',
  access: { auth: 'read', sessionSecret: true, recordsTokenUse: true, namesUsageKeys: true },
  trigger: { authorizer: true },
  timeoutSeconds: 5,
} satisfies HandlerDefinition;

/** The worker's timeout; its queue's visibility timeout is six times this (AWS's guidance). */
export const WORKER_TIMEOUT_SECONDS = 120;
/**
 * Receives of a job before it moves to the DLQ. Failed attempts come back after a backoff of
 * 5, 15, 45 and 135 s (lambdas/sqs/sqs-batch.ts), so five attempts span about four minutes.
 */
export const MAX_RECEIVE_COUNT = 5;

export const SYNTHESIS_WORKER = {
  entry: 'process-synthesis-jobs',
  description: 'Generates synthesis runs from queued jobs',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite', callsModel: true },
  // maxConcurrency bounds the concurrent model calls (and the Anthropic rate limit they share).
  trigger: { queue: 'synthesis-jobs', batchSize: 5, maxConcurrency: 5, changesVisibility: true },
  timeoutSeconds: WORKER_TIMEOUT_SECONDS,
  memoryMb: 512,
  // claude-v1 (the Anthropic SDK, Secrets Manager) is loaded by the first job that names it, the
  // Bedrock SDK by its first run when MODEL_PROVIDER is bedrock, the SQS client by the first job to
  // be retried (ChangeMessageVisibility).
  onDemandParts: {
    'claude-v1': 'lambdas/wiring/claude-v1.ts',
    'claude-bedrock': 'lambdas/wiring/bedrock-client.ts',
    'sqs-queue': 'lambdas/sqs/sqs-queue.ts',
  },
} satisfies HandlerDefinition;

/** Seconds the dead-letter handler may run; its queue's visibility timeout is six times this. */
export const DEAD_LETTER_HANDLER_TIMEOUT_SECONDS = 30;
export const DEAD_LETTER_HANDLER = {
  entry: 'fail-dead-synthesis-jobs',
  description: 'Marks the runs of dead-lettered synthesis jobs failed',
  // data: a failed run's reserved model estimate goes back to its team's month.
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite' },
  trigger: { queue: 'synthesis-jobs', deadLetters: true, batchSize: 10 },
  timeoutSeconds: DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
} satisfies HandlerDefinition;

/**
 * A run still pending or generating this long after it was created cannot finish any more: even
 * if every attempt ran into the worker's timeout and waited out the visibility timeout, its job
 * would be in the DLQ by now. The sweeper fails it.
 */
export const STUCK_RUN_AFTER_SECONDS =
  MAX_RECEIVE_COUNT * 6 * WORKER_TIMEOUT_SECONDS + WORKER_TIMEOUT_SECONDS;

/**
 * On a schedule: fails runs left pending or generating past STUCK_RUN_AFTER_SECONDS, and judges
 * active rollouts by their guardrails (data: the rollouts and their executions). Every minute, so a
 * rollout that crossed its minimum is judged within a minute.
 */
export const RUN_SWEEPER = {
  entry: 'sweep-stuck-runs',
  description:
    'Fails runs left pending or generating past their bound, and judges active rollouts by their guardrails',
  access: { runs: 'readWrite', data: 'readWrite', events: 'readWrite' },
  trigger: { schedule: { everyMinutes: 1 } },
  timeoutSeconds: 60,
} satisfies HandlerDefinition;

/** Seconds a deletion job may run; it stops in time and queues its next step. */
export const DELETION_JOB_TIMEOUT_SECONDS = 60;

/**
 * The deletion job: removes a deleted pipeline's items in bounded steps, each one re-queued, so
 * a pipeline with a million signals never runs into a timeout (lambdas/store/pipeline-deletion.ts).
 */
export const PIPELINE_DELETER = {
  entry: 'delete-pipeline-data',
  description: "Removes a deleted pipeline's items in bounded, re-queued steps",
  access: { runs: 'readWrite', data: 'readWrite', settings: 'write', send: ['lifecycle-jobs'] },
  trigger: { queue: 'lifecycle-jobs', batchSize: 1, maxConcurrency: 2 },
  timeoutSeconds: DELETION_JOB_TIMEOUT_SECONDS,
} satisfies HandlerDefinition;

/**
 * On a schedule: applies shortened retention windows to the records already stored (a key-range
 * Query per pipeline partition, batched deletes, resumable), and re-queues deletions left pending.
 */
export const RETENTION_JOB = {
  entry: 'apply-retention',
  description: 'Removes signals and executions a shortened retention window left outside it',
  access: { runs: 'read', data: 'readWrite', send: ['lifecycle-jobs'] },
  trigger: { schedule: { everyMinutes: 60 } },
  timeoutSeconds: 300,
} satisfies HandlerDefinition;

/**
 * The outbox reader: the events table's stream feeds it; it queues one delivery per subscribed
 * webhook and puts every event on the event bus.
 */
export const EVENT_DELIVERER = {
  entry: 'deliver-events',
  description: 'Fans each committed event out to its webhooks and the event bus',
  access: {
    data: 'read',
    send: ['webhook-deliveries', 'webhook-slow-deliveries'],
    putsEvents: true,
    readsNames: true,
  },
  // Only new events: TTL expiries (REMOVE) never invoke the function.
  trigger: {
    streams: [
      { table: 'Events', batchSize: 100, eventNames: ['INSERT'], onFailure: 'event-stream-failures' },
    ],
  },
  timeoutSeconds: 30,
} satisfies HandlerDefinition;

/**
 * The relay of the events that a change writing one item carries in that item (a run's reject, a
 * pipeline's approval rules): the streams of the runs and the settings tables feed it the writes
 * whose new image holds an event, and it writes each new one into the events table, once, where
 * the deliverer and the audit log find it.
 */
export const EVENT_RELAY = {
  entry: 'relay-carried-events',
  description: 'Writes the events that one-item changes carry (runs, settings) into the events table',
  access: { events: 'write' },
  // Only writes that hold an event; the function skips one whose old image held it already.
  trigger: {
    streams: [
      {
        table: 'Runs',
        batchSize: 100,
        eventNames: ['MODIFY'],
        newImageHas: CARRIED_EVENT_ATTRIBUTE,
        onFailure: 'event-stream-failures',
      },
      {
        table: 'Settings',
        batchSize: 100,
        eventNames: ['INSERT', 'MODIFY'],
        newImageHas: CARRIED_EVENT_ATTRIBUTE,
        onFailure: 'event-stream-failures',
      },
    ],
  },
  timeoutSeconds: 30,
} satisfies HandlerDefinition;

/** Seconds one webhook batch may take: every POST of the batch runs at once, each within 10 s. */
export const WEBHOOK_DELIVERER_TIMEOUT_SECONDS = 30;
/**
 * Receives of a delivery before its DLQ: the 8 scheduled attempts (webhooks/deliver.ts
 * MAX_ATTEMPTS) end the message themselves; this only catches a deliverer that keeps crashing.
 */
export const WEBHOOK_MAX_RECEIVE_COUNT = 12;

/**
 * The fast lane: one attempt per queued delivery, each receiver given FAST_LANE_ANSWER_MS (1.5 s) to
 * answer; a failed one waits for its next time on the schedule. The queue is fair (the team is the
 * message group), and 25 invocations of 10 hold 250 POSTs at once, each for at most 1.5 s: a receiver
 * that does not answer in time is moved to the slow lane, and so are its later deliveries, so
 * another team's delivery waits for a free invocation at most that long, never a 10 s timeout.
 */
export const WEBHOOK_DELIVERER = {
  entry: 'deliver-webhooks',
  description: 'Delivers queued events to webhooks, signed, retried on schedule; moves slow receivers aside',
  access: { data: 'readWrite', webhookSecretKey: true, send: ['webhook-slow-deliveries'] },
  trigger: { queue: 'webhook-deliveries', batchSize: 10, maxConcurrency: 25, changesVisibility: true },
  timeoutSeconds: WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
} satisfies HandlerDefinition;

/**
 * The slow lane: the deliveries of receivers that answered the fast lane too late, each POST given
 * the whole 10 s. Its own invocations (10 of 10) are shared by slow receivers only, fairly by team;
 * the fast lane moves deliveries one by one, so a batch is gathered for up to 1 s (full batches:
 * a hung receiver's backlog drains 10 at a time per invocation, not one).
 */
export const WEBHOOK_SLOW_DELIVERER = {
  entry: 'deliver-slow-webhooks',
  description: 'Delivers queued events to webhooks that answered slowly, with the whole 10 s to answer',
  access: { data: 'readWrite', webhookSecretKey: true },
  trigger: {
    queue: 'webhook-slow-deliveries',
    batchSize: 10,
    maxConcurrency: 10,
    maxBatchingWindowSeconds: 1,
    changesVisibility: true,
  },
  timeoutSeconds: WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
} satisfies HandlerDefinition;

/** Seconds one guardrail batch may take: one judgement per distinct rollout it names. */
export const GUARDRAIL_JUDGE_TIMEOUT_SECONDS = 30;

/**
 * The per-batch guardrail (core/use-cases/guardrail-checks.ts): POST …/executions queues a check
 * for an active rollout it recorded executions of; this judges each rollout a batch names once.
 * Bursts coalesce in the event source: it gathers checks for up to 5 s (or 100 of them) before
 * invoking, and at most 2 invocations run at once, so 100 batches a second of one pipeline cost
 * about one judgement per poller every 5 s instead of 100 a second. The sweeper stays the backstop.
 */
export const GUARDRAIL_JUDGE = {
  entry: 'judge-rollouts',
  description: 'Judges the active rollouts that newly recorded executions name, by their guardrails',
  // Runs: the approval's touched slots, for a rollout judged before its effect was ever read.
  access: { runs: 'read', data: 'readWrite', events: 'readWrite' },
  trigger: {
    queue: 'guardrail-checks',
    batchSize: 100,
    maxConcurrency: 2,
    maxBatchingWindowSeconds: 5,
    changesVisibility: true,
  },
  timeoutSeconds: GUARDRAIL_JUDGE_TIMEOUT_SECONDS,
} satisfies HandlerDefinition;

/**
 * On every deploy: gives every team whose key is missing or not on the stack's evaluation plan its
 * key there (auth/usage-keys.ts backfillUsageKeys), in passes the Provider framework repeats until
 * none is left. Until then such a team's evaluations share the stack's fallback key. Its timeout
 * leaves the framework's own 15-minute function time to answer.
 */
export const USAGE_KEY_BACKFILL = {
  entry: 'provision-usage-keys',
  description: "Gives every team its evaluation usage key on the stack's usage plan (on each deploy)",
  access: { auth: 'read', keepsUsageKeys: true, managesUsageKeys: true },
  trigger: { deploy: true },
  timeoutSeconds: 600,
} satisfies HandlerDefinition;

/** Every minute: judges every monitor (core/use-cases/monitor-judge.ts); lib/operations.ts alarms when it stops. */
export const MONITOR_JUDGE = {
  entry: 'judge-monitors',
  description: 'Judges every monitor over its window and writes each change of state with its event',
  access: { data: 'readWrite', events: 'readWrite', linksToApp: true },
  trigger: { schedule: { everyMinutes: 1 } },
  timeoutSeconds: 55,
} satisfies HandlerDefinition;

/** Every function in lambdas/handlers/, one per module. */
export const HANDLERS: readonly HandlerDefinition[] = [
  AUTHORIZER,
  SYNTHESIS_WORKER,
  DEAD_LETTER_HANDLER,
  RUN_SWEEPER,
  PIPELINE_DELETER,
  RETENTION_JOB,
  EVENT_DELIVERER,
  EVENT_RELAY,
  WEBHOOK_DELIVERER,
  WEBHOOK_SLOW_DELIVERER,
  GUARDRAIL_JUDGE,
  MONITOR_JUDGE,
  USAGE_KEY_BACKFILL,
];

/** Whether CloudFormation runs the handler on each deploy (it has no trigger in the local stack). */
export function runsOnDeploy(handler: HandlerDefinition): boolean {
  return 'deploy' in handler.trigger;
}

/** The queue trigger of a handler, if it has one. */
export function queueTriggerOf(handler: HandlerDefinition): QueueTrigger | undefined {
  return 'queue' in handler.trigger ? handler.trigger : undefined;
}

/** The stream sources of a handler (none for other triggers). */
export function streamSourcesOf(handler: HandlerDefinition): readonly StreamSourceDefinition[] {
  return 'streams' in handler.trigger ? handler.trigger.streams : [];
}

/** The rate of a scheduled handler, if it is one. */
export function scheduleOf(handler: HandlerDefinition): { everyMinutes: number } | undefined {
  return 'schedule' in handler.trigger ? handler.trigger.schedule : undefined;
}

/** The work queues whose URL a function needs: those it sends to, and the one whose messages it hides. */
export function queuesWithUrl(access: FunctionAccess, trigger?: HandlerTrigger): readonly WorkQueueName[] {
  const consumed = trigger && 'queue' in trigger && trigger.changesVisibility ? [trigger.queue] : [];
  return [...new Set([...(access.send ?? []), ...consumed])];
}
