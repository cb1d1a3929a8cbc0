/** An EventBridge rate schedule for the local stack: invokes a function with a Scheduled Event every period. */
import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';

export interface Schedule {
  stop(): Promise<void>;
}

export interface ScheduleOptions {
  everyMs: number;
  ruleName: string;
  region: string;
  accountId: string;
  invoke: (event: ScheduledEvent) => Promise<unknown>;
  /** Where a failed invocation is reported. */
  log: (line: string) => void;
}

/** Like `rate(n minutes)`: the first invocation one period after the start, then one per period. */
export function startSchedule(options: ScheduleOptions): Schedule {
  // Every invocation still under way: one slower than the period overlaps the next, and stopping
  // waits for all of them (else one ends after the database it reads has stopped, and says so).
  const running = new Set<Promise<unknown>>();
  const fire = () => {
    const event: ScheduledEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: options.accountId,
      time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: options.region,
      resources: [`arn:aws:events:${options.region}:${options.accountId}:rule/${options.ruleName}`],
      detail: {},
    };
    const invocation = options
      .invoke(event)
      .catch((error: unknown) => {
        options.log(
          `[schedule ${options.ruleName}] ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
      })
      .finally(() => running.delete(invocation));
    running.add(invocation);
  };
  const timer = setInterval(fire, options.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(running);
    },
  };
}
