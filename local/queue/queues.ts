/**
 * The local stack's queues: one LocalQueue per row of lambdas/queues.ts (and a work queue's
 * dead-letter queue, `<name>-dlq`), with the table's visibility timeouts, retention and receive
 * counts, all behind one SQS-protocol endpoint — the same set the stateful stack deploys.
 */
import {
  DEAD_LETTER_RETENTION_SECONDS,
  deadLetterQueueName,
  QUEUES,
  type QueueName,
  type WorkQueueName,
} from '../../lambdas/queues.ts';
import { type SqsEndpoint, startSqsEndpoint } from './endpoint.ts';
import { LocalQueue } from './queue.ts';

/** A queue of the table as the local stack runs it. */
export interface LocalDeployedQueue {
  readonly queue: LocalQueue;
  /** A work queue's dead-letter queue; a failure queue is its own. */
  readonly deadLetterQueue?: LocalQueue;
}

export interface LocalQueues {
  readonly byName: ReadonlyMap<QueueName, LocalDeployedQueue>;
  /** Every queue behind the SQS protocol, for the functions' SDK clients. */
  readonly sqs: SqsEndpoint;
  /** Each work queue's URL on the endpoint, by name: what the functions' variables hold. */
  readonly urls: Readonly<Record<WorkQueueName, string>>;
}

export interface LocalQueuesOptions {
  region: string;
  accountId: string;
  /** Shorter visibility timeouts by queue name, for tests; the table's otherwise (as on AWS). */
  visibilityTimeoutMs?: Readonly<Partial<Record<WorkQueueName, number>>>;
}

/** Creates every queue of the table and serves them; `sqs.stop()` ends the endpoint. */
export async function startLocalQueues(options: LocalQueuesOptions): Promise<LocalQueues> {
  const where = { region: options.region, accountId: options.accountId };
  const deadLetterRetention = { retentionMs: DEAD_LETTER_RETENTION_SECONDS * 1000 };
  const byName = new Map<QueueName, LocalDeployedQueue>();
  for (const definition of QUEUES) {
    if (definition.kind === 'failures') {
      const queue = new LocalQueue({ name: definition.name, ...where, ...deadLetterRetention });
      byName.set(definition.name, { queue });
      continue;
    }
    const deadLetterQueue = new LocalQueue({
      name: deadLetterQueueName(definition),
      ...where,
      ...deadLetterRetention,
      ...('visibilityTimeoutSeconds' in definition.deadLetters
        ? { visibilityTimeoutMs: definition.deadLetters.visibilityTimeoutSeconds * 1000 }
        : {}),
    });
    const queue = new LocalQueue({
      name: definition.name,
      ...where,
      ...('retentionSeconds' in definition ? { retentionMs: definition.retentionSeconds * 1000 } : {}),
      visibilityTimeoutMs:
        options.visibilityTimeoutMs?.[definition.name] ?? definition.visibilityTimeoutSeconds * 1000,
      deadLetterQueue,
      maxReceiveCount: definition.maxReceiveCount,
    });
    byName.set(definition.name, { queue, deadLetterQueue });
  }
  const all = [...byName.values()].flatMap(({ queue, deadLetterQueue }) =>
    deadLetterQueue ? [queue, deadLetterQueue] : [queue],
  );
  const sqs = await startSqsEndpoint(Object.fromEntries(all.map((queue) => [queue.name, queue])));
  const urls = {} as Record<WorkQueueName, string>;
  for (const definition of QUEUES) {
    if (definition.kind === 'work') urls[definition.name] = sqs.queueUrl(definition.name);
  }
  return { byName, sqs, urls };
}
