/**
 * The two kinds of execution environment the local runtime can start, behind one interface that
 * lambda-function.ts drives the same way: a worker thread of this process (the default when this
 * Node is Lambda's major, node.ts) or a child process on the Node that functionNode() picks. Each
 * runs local/runtime/host.ts with the function's bundle and only the function's variables, and ends
 * on its own: a process.exit, an uncaught error or a kill ends that environment and nothing else.
 * Both carry messages by structured clone (a worker's port; a child's IPC channel with advanced
 * serialization), the event put through acrossJson() first (json-plain.ts).
 */
import { fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { acrossJson } from './json-plain.ts';
import { type HostMessage, messagesTo, type RuntimeMessage } from './protocol.ts';

/** Which kind of environment a function's invocations run in. */
export type EnvironmentKind = 'worker' | 'process';

export interface SandboxOptions {
  /** The bundled host (local/runtime/bundles.ts) and the function's bundle it loads. */
  host: string;
  bundle: string;
  /** The Node binary of a child process (a worker runs on this process's Node). */
  execPath: string;
  /** Every variable the function sees, Lambda's included: nothing of this process's. */
  env: Record<string, string>;
  memoryMb: number;
  /** Each line the function writes to stdout or stderr, as it happens. */
  log: (line: string) => void;
}

/** One running environment, seen from the runtime. */
export interface Sandbox {
  /** Unique among running environments: the child's process id, or the worker's thread id. */
  readonly id: number;
  /** Whether a message sent now can still arrive. */
  readonly connected: boolean;
  send(message: RuntimeMessage): void;
  /** Ends the environment at once, whatever it is doing (Lambda's end of a timed-out sandbox). */
  kill(): void;
  onMessage(listener: (message: HostMessage) => void): void;
  /** Called once, when the environment has ended, with Lambda's words for how it ended. */
  onExit(listener: (description: string) => void): void;
  /** The bytes its V8 heap uses now (a worker's; null for a child process): what a bench samples. */
  heapUsedBytes(): Promise<number | null>;
}

export function startSandbox(kind: EnvironmentKind, options: SandboxOptions): Sandbox {
  return kind === 'worker' ? startWorker(options) : startProcess(options);
}

function forwardLines(streams: ReadonlyArray<Readable | null>, log: (line: string) => void): void {
  for (const stream of streams) if (stream) createInterface({ input: stream }).on('line', log);
}

/** The message as it leaves for an environment: an invocation's event as JSON would carry it. */
function outgoing(message: RuntimeMessage): RuntimeMessage {
  return message.type === 'invoke' ? { ...message, event: acrossJson(message.event) } : message;
}

/** Calls `listener` once, on the first of the ends reported to the returned function. */
function once(listener: (description: string) => void): (description: string) => void {
  let ended = false;
  return (description) => {
    if (ended) return;
    ended = true;
    listener(description);
  };
}

function startProcess(options: SandboxOptions): Sandbox {
  const limits = heapLimits(options.memoryMb);
  const child = fork(options.host, [options.bundle], {
    execPath: options.execPath,
    // Not this process's flags (a TypeScript loader, inspector ports): a Lambda sandbox has none.
    // Its heap is bounded by the function's memory, as a worker's is: a function that outgrows it
    // ends its own process (a 502 for that request), never the machine's memory the stack needs.
    execArgv: [
      `--max-old-space-size=${limits.maxOldGenerationSizeMb}`,
      `--max-semi-space-size=${Math.max(1, Math.round(limits.maxYoungGenerationSizeMb / 3))}`,
    ],
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // Structured clone, as a worker's port: no JSON text to build and parse for each message.
    serialization: 'advanced',
  });
  forwardLines([child.stdout, child.stderr], options.log);
  const kill = () => child.kill('SIGKILL');
  return {
    id: child.pid ?? -1,
    get connected() {
      return child.connected;
    },
    send: (message) => child.send(outgoing(message), (error) => error && kill()),
    kill,
    onMessage: (listener) => child.on('message', messagesTo<HostMessage>(listener)),
    onExit: (listener) => {
      const end = once(listener);
      child.once('exit', (code, signal) =>
        end(`Runtime exited ${signal ? `with signal: ${signal}` : `with error: exit status ${code}`}`),
      );
      // The process could not start (or its channel broke): the environment never existed.
      child.once('error', (error) => end(`Runtime failed to start: ${error.message}`));
    },
    heapUsedBytes: async () => null,
  };
}

/**
 * The function's memory size bounds a worker's heap, as it bounds a Lambda sandbox: a function that
 * outgrows it ends its own environment, not the local stack. The young generation is bounded too:
 * with V8's default one, a worker running out of heap aborted the whole process (Node 24).
 */
function heapLimits(memoryMb: number) {
  return {
    maxOldGenerationSizeMb: memoryMb,
    maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.round(memoryMb / 16))),
  };
}

function startWorker(options: SandboxOptions): Sandbox {
  const worker = new Worker(options.host, {
    argv: [options.bundle],
    // The worker's process.env is this object alone, not a view of this process's variables.
    env: options.env,
    execArgv: [],
    stdout: true,
    stderr: true,
    resourceLimits: heapLimits(options.memoryMb),
  });
  forwardLines([worker.stdout, worker.stderr], options.log);
  // A child process prints its uncaught error before it dies; a worker hands it over instead.
  worker.on('error', (error: Error) => {
    for (const line of `Uncaught ${error.stack ?? error.message}`.split('\n')) options.log(line);
  });
  let running = true;
  worker.once('exit', () => {
    running = false;
  });
  return {
    id: worker.threadId,
    get connected() {
      return running;
    },
    send: (message) => worker.postMessage(outgoing(message)),
    kill: () => void worker.terminate(),
    onMessage: (listener) => worker.on('message', messagesTo<HostMessage>(listener)),
    onExit: (listener) => {
      const end = once(listener);
      worker.once('exit', (code) => end(`Runtime exited with error: exit status ${code}`));
    },
    heapUsedBytes: async () => {
      // Node 24's Worker (workers run only on Lambda's major); this repository's types are Node 20's.
      const { getHeapStatistics } = worker as Worker & {
        getHeapStatistics?: () => Promise<{ used_heap_size: number }>;
      };
      if (!running || !getHeapStatistics) return null;
      // A worker that ends meanwhile has no heap to report.
      return getHeapStatistics.call(worker).then(
        (statistics) => statistics.used_heap_size,
        () => null,
      );
    },
  };
}
