/**
 * The handlers' triggers in the local stack, from their declarations (HANDLERS of
 * lambdas/functions.ts) as the CDK stack makes them: an SQS event source on each consumed queue (or
 * its dead-letter queue), a timer per schedule, and the stream readers of the stream-fed handlers.
 */
import { HANDLERS, queueTriggerOf, scheduleOf, streamSourcesOf } from '../lambdas/functions.ts';
import type { QueueName } from '../lambdas/queues.ts';
import { startEventSource } from './queue/event-source.ts';
import type { LocalDeployedQueue } from './queue/queues.ts';
import type { LocalFunction } from './runtime/lambda-function.ts';
import { startSchedule } from './scheduler.ts';
import type { StreamReader } from './streams/stack-streams.ts';

export interface TriggerOptions {
  region: string;
  accountId: string;
  /** Other periods for scheduled handlers, by handler entry (tests); their declarations' otherwise. */
  scheduleEveryMs?: Readonly<Record<string, number>>;
  log: (line: string) => void;
}

function functionOf(functions: ReadonlyMap<string, LocalFunction>, entry: string): LocalFunction {
  const fn = functions.get(entry);
  if (fn === undefined) throw new Error(`No local function for ${entry}`);
  return fn;
}

/** A period for each scheduled handler; an unknown entry in `overrides` is a mistake, refused. */
function schedulePeriods(overrides: Readonly<Record<string, number>>): Map<string, number> {
  const periods = new Map<string, number>();
  for (const handler of HANDLERS) {
    const schedule = scheduleOf(handler);
    if (schedule) periods.set(handler.entry, overrides[handler.entry] ?? schedule.everyMinutes * 60_000);
  }
  for (const entry of Object.keys(overrides)) {
    if (!periods.has(entry)) throw new Error(`scheduleEveryMs: '${entry}' is no scheduled handler.`);
  }
  return periods;
}

/**
 * Starts every queue event source and schedule, each added to `stops` once started (an event
 * source's stop waits for its invocations in flight).
 */
export function startTriggers(
  queues: ReadonlyMap<QueueName, LocalDeployedQueue>,
  functions: ReadonlyMap<string, LocalFunction>,
  options: TriggerOptions,
  stops: Array<() => Promise<unknown>>,
): void {
  for (const handler of HANDLERS) {
    const trigger = queueTriggerOf(handler);
    if (!trigger) continue;
    const fn = functionOf(functions, handler.entry);
    const deployed = queues.get(trigger.queue);
    const queue = trigger.deadLetters ? deployed?.deadLetterQueue : deployed?.queue;
    if (queue === undefined) throw new Error(`No local queue for ${handler.entry}'s trigger.`);
    const source = startEventSource(queue, (event) => fn.invoke(event), {
      batchSize: trigger.batchSize,
      ...(trigger.maxConcurrency ? { maxConcurrency: trigger.maxConcurrency } : {}),
      ...(trigger.maxBatchingWindowSeconds
        ? { maxBatchingWindowSeconds: trigger.maxBatchingWindowSeconds }
        : {}),
      functionName: fn.name,
      log: options.log,
    });
    stops.push(() => source.stop());
  }
  for (const [entry, everyMs] of schedulePeriods(options.scheduleEveryMs ?? {})) {
    const fn = functionOf(functions, entry);
    const schedule = startSchedule({
      everyMs,
      ruleName: entry,
      region: options.region,
      accountId: options.accountId,
      invoke: (event) => fn.invoke(event),
      log: options.log,
    });
    stops.push(() => schedule.stop());
  }
}

/** The handlers fed by table streams, each with how to invoke it (local/streams/stack-streams.ts). */
export function streamReaders(functions: ReadonlyMap<string, LocalFunction>): StreamReader[] {
  return HANDLERS.filter((handler) => streamSourcesOf(handler).length > 0).map((handler) => {
    const fn = functionOf(functions, handler.entry);
    return { streamSources: streamSourcesOf(handler), invoke: (event: unknown) => fn.invoke(event) };
  });
}
