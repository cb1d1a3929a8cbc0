/**
 * The queues of lambdas/queues.ts as SQS queues of the stateful stack: one loop over the table, each
 * queue (and a work queue's dead-letter queue) at its declared construct path, encrypted, TLS only,
 * kept in prod like the tables.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import {
  DEAD_LETTER_RETENTION_SECONDS,
  QUEUES,
  type QueueDefinition,
  type QueueName,
} from '../lambdas/queues.ts';
import { acknowledgeNag } from './nag.ts';

/** A deployed queue of the table: the queue, and a work queue's dead-letter queue. */
export interface DeployedQueue {
  readonly definition: QueueDefinition;
  readonly queue: Queue;
  /** Absent for a queue that only collects failures: it is the dead-letter queue itself. */
  readonly deadLetterQueue?: Queue;
}

/** The queue that holds a deployed queue's dead letters: its DLQ, or itself for a failure queue. */
export function deadLettersOf(deployed: DeployedQueue): Queue {
  return deployed.deadLetterQueue ?? deployed.queue;
}

/** The construct at `path` below `root` (its parent scopes made as plain constructs when missing). */
function scopeAndId(root: IConstruct, path: string): { scope: IConstruct; id: string } {
  const parts = path.split('/');
  const id = parts.pop();
  if (id === undefined || id === '') throw new Error(`Empty construct path '${path}'.`);
  let scope = root;
  for (const part of parts) scope = scope.node.tryFindChild(part) ?? new Construct(scope, part);
  return { scope, id };
}

/** Creates every queue of lambdas/queues.ts below `root` (the stateful stack), by name. */
export function createQueues(root: IConstruct, removalPolicy: RemovalPolicy): Map<QueueName, DeployedQueue> {
  const common = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, removalPolicy };
  const deadLetterQueue = (path: string, whyNoRedrive: string, visibilityTimeoutSeconds?: number) => {
    const { scope, id } = scopeAndId(root, path);
    const queue = new Queue(scope, id, {
      ...common,
      retentionPeriod: Duration.seconds(DEAD_LETTER_RETENTION_SECONDS),
      ...(visibilityTimeoutSeconds ? { visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds) } : {}),
    });
    acknowledgeNag(queue, 'AwsSolutions-SQS3', whyNoRedrive);
    return queue;
  };
  const deployed = new Map<QueueName, DeployedQueue>();
  for (const definition of QUEUES) {
    if (definition.kind === 'failures') {
      const queue = deadLetterQueue(definition.constructPath, definition.deadLetters.whyNoRedrive);
      deployed.set(definition.name, { definition, queue });
      continue;
    }
    const { deadLetters } = definition;
    const dlq = deadLetterQueue(
      deadLetters.constructPath,
      deadLetters.whyNoRedrive,
      'visibilityTimeoutSeconds' in deadLetters ? deadLetters.visibilityTimeoutSeconds : undefined,
    );
    const { scope, id } = scopeAndId(root, definition.constructPath);
    const queue = new Queue(scope, id, {
      ...common,
      visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
      ...('retentionSeconds' in definition
        ? { retentionPeriod: Duration.seconds(definition.retentionSeconds) }
        : {}),
      deadLetterQueue: { queue: dlq, maxReceiveCount: definition.maxReceiveCount },
    });
    deployed.set(definition.name, { definition, queue, deadLetterQueue: dlq });
  }
  return deployed;
}
