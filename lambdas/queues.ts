/**
 * The service's queues, one row each: the CDK stack (lib/stateful.ts) and the local stack
 * (local/queue/queues.ts) create every queue of this table and its dead-letter queue, the alarms
 * watch every dead-letter queue, and a function names a queue by its name (`send` in its access,
 * `queue` in a handler's trigger, `onFailure` of a stream source). Pure data: no CDK, no SDK.
 */
import {
  DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
  DELETION_JOB_TIMEOUT_SECONDS,
  GUARDRAIL_JUDGE_TIMEOUT_SECONDS,
  MAX_RECEIVE_COUNT,
  WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
  WEBHOOK_MAX_RECEIVE_COUNT,
  WORKER_TIMEOUT_SECONDS,
} from './functions.ts';

const DAY_SECONDS = 24 * 3600;
/** How long a dead-letter queue keeps what lands in it: SQS's longest, for a person to look. */
export const DEAD_LETTER_RETENTION_SECONDS = 14 * DAY_SECONDS;

/** What lands in a dead-letter queue, said to a person: its alarm and why it has no DLQ itself. */
export interface DeadLetters {
  /** The alarm on any visible message: what is stuck there, what it means, where to look. */
  readonly alarm: string;
  /** Why this queue of dead letters has no dead-letter queue of its own (its cdk-nag SQS3 acknowledgement). */
  readonly whyNoRedrive: string;
}

/** A queue whose messages a function consumes, with a dead-letter queue for those that keep failing. */
export interface WorkQueueDefinition {
  readonly kind: 'work';
  /** What access and triggers name it by; locally also its name, `<name>-dlq` its DLQ's. */
  readonly name: string;
  /** The variable that holds its URL in the functions that send to it or hide its messages. */
  readonly urlVariable: string;
  /**
   * Its construct path in the stateful stack, and its DLQ's: part of their CloudFormation logical
   * ids, so changing one replaces the deployed queue (and loses its messages).
   */
  readonly constructPath: string;
  /** At least six times its consumer's timeout (AWS's guidance for a Lambda event source). */
  readonly visibilityTimeoutSeconds: number;
  /** @default SQS's four days */
  readonly retentionSeconds?: number;
  /**
   * A fair queue: each sender gives a message its team as MessageGroupId, and SQS (as the local
   * queue) then shares deliveries fairly across the teams with messages waiting. A standard queue
   * needs no setting for that; FIFO queues are not offered (the local queue has no FIFO semantics).
   */
  readonly fair: boolean;
  /** Receives of a message before it moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly deadLetters: DeadLetters & {
    readonly constructPath: string;
    /** When a function consumes the DLQ: six times its timeout. @default SQS's 30 s */
    readonly visibilityTimeoutSeconds?: number;
  };
  /** An alarm once its oldest message has waited this long: what that means and where to look. */
  readonly oldestMessageAlarm?: { readonly afterSeconds: number; readonly description: string };
}

/**
 * A queue that only collects failures (the on-failure destination of stream sources): a person
 * reads it, no function consumes it, and it is itself a queue of dead letters.
 */
export interface FailureQueueDefinition {
  readonly kind: 'failures';
  readonly name: string;
  /** As WorkQueueDefinition's: part of its logical id. */
  readonly constructPath: string;
  readonly deadLetters: DeadLetters;
}

export type QueueDefinition = WorkQueueDefinition | FailureQueueDefinition;

/** Synthesis jobs: one per run to generate, consumed by the synthesis worker. */
const SYNTHESIS_JOBS = {
  kind: 'work',
  name: 'synthesis-jobs',
  urlVariable: 'SYNTHESIS_QUEUE_URL',
  constructPath: 'Stateful/SynthesisQueue',
  visibilityTimeoutSeconds: 6 * WORKER_TIMEOUT_SECONDS,
  fair: true,
  maxReceiveCount: MAX_RECEIVE_COUNT,
  deadLetters: {
    constructPath: 'Stateful/SynthesisDeadLetterQueue',
    // The dead-letter handler consumes it.
    visibilityTimeoutSeconds: 6 * DEAD_LETTER_HANDLER_TIMEOUT_SECONDS,
    alarm: 'Synthesis jobs are waiting in the dead-letter queue: their runs are not marked failed.',
    whyNoRedrive:
      'This queue is the dead-letter queue of the synthesis queue; a DLQ of a DLQ would only move the same poison messages again. The dead-letter handler marks their runs failed and an alarm watches this queue.',
  },
  oldestMessageAlarm: {
    afterSeconds: 600,
    description:
      'runs stay pending. Check that the synthesis worker is consuming (its errors, throttles and concurrency).',
  },
} as const satisfies WorkQueueDefinition;

/** Data-lifecycle jobs: a pipeline's deletion, step after step, each re-queued by the deleter. */
const LIFECYCLE_JOBS = {
  kind: 'work',
  name: 'lifecycle-jobs',
  urlVariable: 'LIFECYCLE_QUEUE_URL',
  constructPath: 'Stateful/LifecycleQueue',
  visibilityTimeoutSeconds: 6 * DELETION_JOB_TIMEOUT_SECONDS,
  fair: false,
  maxReceiveCount: MAX_RECEIVE_COUNT,
  deadLetters: {
    constructPath: 'Stateful/LifecycleDeadLetterQueue',
    alarm:
      'Pipeline deletion jobs are in their dead-letter queue: those deletions stay pending until the hourly ' +
      'retention job queues them again. The deleter\'s log lines "pipeline deletion step failed" name them.',
    whyNoRedrive:
      'This queue is the dead-letter queue of the lifecycle queue. A deletion whose job lands here stays pending; the hourly retention job queues pending deletions again.',
  },
} as const satisfies WorkQueueDefinition;

/** Webhook deliveries: one per (event, webhook); a failed attempt waits in it for its next time (up to 12 h). */
const WEBHOOK_DELIVERIES = {
  kind: 'work',
  name: 'webhook-deliveries',
  urlVariable: 'WEBHOOK_QUEUE_URL',
  constructPath: 'Stateful/WebhookQueue',
  visibilityTimeoutSeconds: 6 * WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
  // The schedule's waits add up to about 28 h: the messages must outlive them.
  retentionSeconds: 4 * DAY_SECONDS,
  // The team is the message group: one team's receivers that hang hold back its own backlog, not
  // every other team's deliveries (the deliverer's invocations are shared by all teams).
  fair: true,
  maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT,
  deadLetters: {
    constructPath: 'Stateful/WebhookDeadLetterQueue',
    alarm:
      'Webhook deliveries are in their dead-letter queue: the webhook deliverer kept crashing on them, so ' +
      'those events never reached their webhooks. Its log lines name the events and webhooks.',
    whyNoRedrive:
      'This queue is the dead-letter queue of the webhook queue: only deliveries whose deliverer kept crashing land here; a DLQ of it would only move them again.',
  },
} as const satisfies WorkQueueDefinition;

/**
 * The slow lane of webhook deliveries: those of receivers that left a fast-lane POST unanswered
 * (webhooks/deliver.ts FAST_LANE_ANSWER_MS), consumed by a deliverer of its own with the whole
 * 10 s budget, so they hold none of the fast lane's invocations.
 */
const WEBHOOK_SLOW_DELIVERIES = {
  kind: 'work',
  name: 'webhook-slow-deliveries',
  urlVariable: 'WEBHOOK_SLOW_QUEUE_URL',
  constructPath: 'Stateful/WebhookSlowQueue',
  visibilityTimeoutSeconds: 6 * WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
  retentionSeconds: 4 * DAY_SECONDS,
  // Among slow receivers too, one team's hung ones hold back its own backlog first.
  fair: true,
  maxReceiveCount: WEBHOOK_MAX_RECEIVE_COUNT,
  deadLetters: {
    constructPath: 'Stateful/WebhookSlowDeadLetterQueue',
    alarm:
      'Slow-lane webhook deliveries are in their dead-letter queue: the slow webhook deliverer kept crashing on ' +
      'them, so those events never reached their webhooks. Its log lines name the events and webhooks.',
    whyNoRedrive:
      'This queue is the dead-letter queue of the slow webhook queue: only deliveries whose deliverer kept crashing land here; a DLQ of it would only move them again.',
  },
} as const satisfies WorkQueueDefinition;

/** Rollouts to judge: one check per batch of executions of an arm (POST …/executions). */
const GUARDRAIL_CHECKS = {
  kind: 'work',
  name: 'guardrail-checks',
  urlVariable: 'GUARDRAIL_QUEUE_URL',
  constructPath: 'Stateful/GuardrailQueue',
  visibilityTimeoutSeconds: 6 * GUARDRAIL_JUDGE_TIMEOUT_SECONDS,
  // A check older than this is moot: the sweeper has judged its rollout many times since.
  retentionSeconds: 3600,
  fair: true,
  maxReceiveCount: MAX_RECEIVE_COUNT,
  deadLetters: {
    constructPath: 'Stateful/GuardrailDeadLetterQueue',
    alarm:
      'Guardrail checks are waiting in their dead-letter queue: judging a rollout kept failing. The sweeper still ' +
      'judges rollouts every minute; the judge\'s log lines "guardrail check failed" name the rollouts and the errors.',
    whyNoRedrive:
      'This queue is the dead-letter queue of the guardrail queue: checks whose judgement kept failing land here (an alarm watches it); the sweeper judges their rollouts anyway.',
  },
} as const satisfies WorkQueueDefinition;

/** Stream batches given up on: the shard and sequence numbers of events not delivered or not relayed. */
const EVENT_STREAM_FAILURES = {
  kind: 'failures',
  name: 'event-stream-failures',
  constructPath: 'EventDelivery/EventDeliveryDeadLetterQueue',
  deadLetters: {
    alarm:
      'Stream batches of the events, runs or settings table are in the dead-letter queue: committed events were not ' +
      'delivered (webhooks, event bus) or not relayed into the events table. Each message names the shard and ' +
      "sequence numbers to replay; the deliverer's and the relay's error log lines name the events.",
    whyNoRedrive:
      'This queue is the on-failure destination of the events stream: it holds the stream positions of batches that could not be delivered or put on the bus, for a person to replay.',
  },
} as const satisfies FailureQueueDefinition;

/** Every queue of the service. */
export const QUEUES = [
  SYNTHESIS_JOBS,
  LIFECYCLE_JOBS,
  WEBHOOK_DELIVERIES,
  WEBHOOK_SLOW_DELIVERIES,
  GUARDRAIL_CHECKS,
  EVENT_STREAM_FAILURES,
] as const satisfies readonly QueueDefinition[];

export type QueueName = (typeof QUEUES)[number]['name'];
export type WorkQueueName = Extract<(typeof QUEUES)[number], { kind: 'work' }>['name'];
/** The variables that hold queue URLs: what a function reads its queue's URL from. */
export type QueueUrlVariable = Extract<(typeof QUEUES)[number], { kind: 'work' }>['urlVariable'];

/** The row of the queue named `name`. */
export function queueNamed(name: QueueName): QueueDefinition {
  const queue = QUEUES.find((candidate) => candidate.name === name);
  if (queue === undefined) throw new Error(`lambdas/queues.ts declares no queue '${name}'.`);
  return queue;
}

/** The row of the work queue named `name`. */
export function workQueueNamed(name: WorkQueueName): WorkQueueDefinition {
  const queue = queueNamed(name);
  if (queue.kind !== 'work') throw new Error(`Queue '${name}' only collects failures.`);
  return queue;
}

/** The local name of a queue's dead-letter queue. */
export function deadLetterQueueName(queue: WorkQueueDefinition): string {
  return `${queue.name}-dlq`;
}
