/**
 * The handlers' triggers in the local stack, from their declarations (HANDLERS of
 * lambdas/functions.ts) as the CDK stack makes them: an SQS event source on each consumed queue (or
 * its dead-letter queue), a timer per schedule, and the stream readers of the stream-fed handlers.
 */
import {
  HANDLERS,
  queueTriggerOf,
  type StreamSourceDefinition,
  scheduleOf,
  streamSourcesOf,
} from '../lambdas/functions.ts';
import type { QueueName } from '../lambdas/queues.ts';
import { type EventSourceOptions, startEventSource } from './queue/event-source.ts';
import type { LocalQueue } from './queue/queue.ts';
import type { LocalDeployedQueue } from './queue/queues.ts';
import type { LocalFunction } from './runtime/lambda-function.ts';
import { startSchedule } from './scheduler.ts';
import type { StreamReader } from './streams/stack-streams.ts';

/** What invokes a handler in the local stack: what startTriggers and StreamReaders start. */
export type LocalTrigger =
  | {
      kind: 'queue';
      entry: string;
      queue: LocalQueue;
      settings: Pick<EventSourceOptions, 'batchSize' | 'maxConcurrency' | 'maxBatchingWindowSeconds'>;
    }
  | { kind: 'schedule'; entry: string; everyMs: number }
  | { kind: 'streams'; entry: string; sources: readonly StreamSourceDefinition[] };

/**
 * Every handler's trigger on the local queues; `scheduleEveryMs` gives scheduled handlers other
 * periods by entry (tests), and an entry in it that is no scheduled handler is a mistake, refused.
 */
export function localTriggers(
  queues: ReadonlyMap<QueueName, LocalDeployedQueue>,
  scheduleEveryMs: Readonly<Record<string, number>> = {},
): LocalTrigger[] {
  const triggers = HANDLERS.flatMap((handler): LocalTrigger[] => {
    const queueTrigger = queueTriggerOf(handler);
    if (queueTrigger) {
      const deployed = queues.get(queueTrigger.queue);
      const queue = queueTrigger.deadLetters ? deployed?.deadLetterQueue : deployed?.queue;
      if (queue === undefined) throw new Error(`No local queue for ${handler.entry}'s trigger.`);
      const { batchSize, maxConcurrency, maxBatchingWindowSeconds } = queueTrigger;
      const settings = {
        batchSize,
        ...(maxConcurrency ? { maxConcurrency } : {}),
        ...(maxBatchingWindowSeconds ? { maxBatchingWindowSeconds } : {}),
      };
      return [{ kind: 'queue', entry: handler.entry, queue, settings }];
    }
    const schedule = scheduleOf(handler);
    if (schedule) {
      const everyMs = scheduleEveryMs[handler.entry] ?? schedule.everyMinutes * 60_000;
      return [{ kind: 'schedule', entry: handler.entry, everyMs }];
    }
    const sources = streamSourcesOf(handler);
    return sources.length > 0 ? [{ kind: 'streams', entry: handler.entry, sources }] : [];
  });
  for (const entry of Object.keys(scheduleEveryMs)) {
    if (!triggers.some((trigger) => trigger.kind === 'schedule' && trigger.entry === entry))
      throw new Error(`scheduleEveryMs: '${entry}' is no scheduled handler.`);
  }
  return triggers;
}

export interface TriggerOptions {
  region: string;
  accountId: string;
  log: (line: string) => void;
}

function functionOf(functions: ReadonlyMap<string, LocalFunction>, entry: string): LocalFunction {
  const fn = functions.get(entry);
  if (fn === undefined) throw new Error(`No local function for ${entry}`);
  return fn;
}

/**
 * Starts every queue event source and schedule of `triggers`, each added to `stops` once started
 * (an event source's stop waits for its invocations in flight). Stream triggers are streamReaders'.
 */
export function startTriggers(
  triggers: readonly LocalTrigger[],
  functions: ReadonlyMap<string, LocalFunction>,
  options: TriggerOptions,
  stops: Array<() => Promise<unknown>>,
): void {
  for (const trigger of triggers) {
    if (trigger.kind === 'streams') continue;
    const fn = functionOf(functions, trigger.entry);
    if (trigger.kind === 'queue') {
      const source = startEventSource(trigger.queue, (event) => fn.invoke(event), {
        ...trigger.settings,
        functionName: fn.name,
        log: options.log,
      });
      stops.push(() => source.stop());
      continue;
    }
    const schedule = startSchedule({
      everyMs: trigger.everyMs,
      ruleName: trigger.entry,
      region: options.region,
      accountId: options.accountId,
      invoke: (event) => fn.invoke(event),
      log: options.log,
    });
    stops.push(() => schedule.stop());
  }
}

/** The stream-fed handlers of `triggers`, each with how to invoke it (local/streams/stack-streams.ts). */
export function streamReaders(
  triggers: readonly LocalTrigger[],
  functions: ReadonlyMap<string, LocalFunction>,
): StreamReader[] {
  return triggers.flatMap((trigger) => {
    if (trigger.kind !== 'streams') return [];
    const fn = functionOf(functions, trigger.entry);
    return [{ streamSources: trigger.sources, invoke: (event: unknown) => fn.invoke(event) }];
  });
}
