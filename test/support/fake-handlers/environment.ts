import { setTimeout as sleep } from 'node:timers/promises';

/** Module state: survives between invocations of one environment, as on Lambda. */
let invocations = 0;

/**
 * Answers with what this execution environment is: its process id, how many invocations its
 * module instance has served, the environment variables named in `event.names`; it waits
 * `event.sleepMs` first, and with `event.exit` or `event.crash` it ends its own process.
 */
export const handler = async (event: {
  names?: string[];
  sleepMs?: number;
  exit?: boolean;
  crash?: boolean;
  log?: string;
}) => {
  invocations += 1;
  const startedAt = performance.timeOrigin + performance.now();
  if (event.log) console.log(JSON.stringify({ level: 'ERROR', message: event.log }));
  if (event.sleepMs) await sleep(event.sleepMs);
  if (event.exit) process.exit(3);
  if (event.crash)
    setTimeout(() => {
      throw new Error('uncaught in a timer');
    }, 0);
  if (event.crash) await sleep(1_000);
  return {
    pid: process.pid,
    startedAt,
    endedAt: performance.timeOrigin + performance.now(),
    invocations,
    node: process.versions.node,
    env: Object.fromEntries((event.names ?? []).map((name) => [name, process.env[name] ?? null])),
  };
};
