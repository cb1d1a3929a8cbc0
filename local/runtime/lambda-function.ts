/**
 * One function of the local stack, run the way Lambda runs it: each execution environment (a
 * worker thread or a child process, sandboxes.ts) has its own module graph and only the function's
 * environment variables; an environment runs one invocation at a time and stays warm for the next;
 * more environments start for concurrency, up to the function's limit; an invocation past the
 * timeout ends its environment; a crash or a process.exit ends only its own environment.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { environmentKind } from './node.ts';
import type { ErrorReport, HostMessage } from './protocol.ts';
import { type EnvironmentKind, type Sandbox, startSandbox } from './sandboxes.ts';

/** An invocation that ran past its function's timeout. */
export class InvocationTimeoutError extends Error {
  constructor(timeoutMs: number) {
    // Lambda's own wording, so local logs read like CloudWatch's.
    super(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
    this.name = 'InvocationTimeoutError';
  }
}

/** A failed invocation, as Lambda reports it (`errorType` is the handler's error name or `Runtime.*`). */
export class FunctionError extends Error {
  constructor(readonly report: ErrorReport) {
    super(report.errorMessage);
    this.name = report.errorType;
  }
}

export interface LocalFunctionOptions {
  /** The function's name in logs and in `context.functionName`. */
  name: string;
  /** The bundle (local/runtime/bundles.ts) and the host that loads it. */
  bundle: string;
  host: string;
  /** The Node binary of a child-process environment (local/runtime/node.ts). */
  execPath: string;
  /** Worker threads or child processes; environmentKind() (local/runtime/node.ts) by default. */
  environmentKind?: EnvironmentKind;
  /** The function's own variables; Lambda's reserved ones are added here. */
  environment: Readonly<Record<string, string>>;
  timeoutMs: number;
  memoryMb?: number;
  /** Most environments at once; further invocations wait for one to be free. */
  maxEnvironments: number;
  region: string;
  accountId: string;
  /** Each line the function writes to stdout or stderr, as it happens. */
  log: (line: string) => void;
  /** Called when an invocation ends, however it ended (the local stack wakes its stream readers). */
  afterInvocation?: () => void;
}

interface Pending {
  id: number;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

let nextInvocationId = 1;

/** One execution environment: a sandbox running local/runtime/host.ts with the function's bundle. */
class ExecutionEnvironment {
  readonly sandbox: Sandbox;
  /** Lambda's name for this environment's log stream, also its AWS_LAMBDA_LOG_STREAM_NAME. */
  readonly logStream: string;
  readonly ready: Promise<void>;
  /** Resolves once the environment has ended. */
  readonly gone: Promise<void>;
  pending: Pending | undefined;
  /** Exited, or being killed: never given another invocation. */
  exited = false;
  private readonly usageAnswers = new Map<number, (cpuMicros: number) => void>();

  constructor(
    private readonly options: LocalFunctionOptions,
    kind: EnvironmentKind,
    onGone: (environment: ExecutionEnvironment) => void,
  ) {
    const day = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
    this.logStream = `${day}/[$LATEST]${randomBytes(16).toString('hex')}`;
    this.sandbox = startSandbox(kind, {
      host: options.host,
      bundle: options.bundle,
      execPath: options.execPath,
      env: { ...lambdaVariables(options), AWS_LAMBDA_LOG_STREAM_NAME: this.logStream },
      memoryMb: options.memoryMb ?? 256,
      log: options.log,
    });
    let ended: () => void = () => {};
    this.gone = new Promise<void>((resolve) => {
      ended = resolve;
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.sandbox.onMessage((message) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'init-error') reject(new FunctionError(message.error));
        else if (message.type === 'usage') this.usageAnswers.get(message.id)?.(message.cpuMicros);
        else this.settle(message);
      });
      this.sandbox.onExit((errorMessage) => {
        this.exited = true;
        const error = new FunctionError({ errorType: 'Runtime.ExitError', errorMessage, trace: [] });
        reject(error);
        this.fail(error);
        onGone(this);
        ended();
      });
    });
    // An init failure is reported by the invocation that waits for it.
    this.ready.catch(() => undefined);
  }

  invoke(event: unknown, awsRequestId: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = nextInvocationId++;
      const { timeoutMs } = this.options;
      const timer = setTimeout(() => {
        this.fail(new InvocationTimeoutError(timeoutMs));
        this.kill();
      }, timeoutMs);
      this.pending = { id, resolve, reject, timer };
      if (!this.sandbox.connected) {
        this.fail(
          new FunctionError({ errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited', trace: [] }),
        );
        return;
      }
      this.sandbox.send({
        type: 'invoke',
        id,
        event,
        awsRequestId,
        functionName: this.options.name,
        deadline: Date.now() + timeoutMs,
        memoryMb: this.options.memoryMb ?? 256,
        region: this.options.region,
        accountId: this.options.accountId,
      });
    });
  }

  /**
   * The CPU microseconds the environment has used (its thread's, or its process's), asked between
   * or during invocations; null once it has ended or when it does not answer within a second.
   */
  cpuMicros(): Promise<number | null> {
    if (this.exited || !this.sandbox.connected) return Promise.resolve(null);
    const id = nextInvocationId++;
    return new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => done(null), 1_000);
      const done = (value: number | null) => {
        clearTimeout(timer);
        this.usageAnswers.delete(id);
        resolve(value);
      };
      this.usageAnswers.set(id, done);
      void this.gone.then(() => done(null));
      this.sandbox.send({ type: 'usage', id });
    });
  }

  kill(): void {
    if (this.exited) return;
    this.exited = true;
    this.sandbox.kill();
  }

  /** Asks the environment to exit, and kills it if it has not after `graceMs`. */
  shutDown(graceMs: number): void {
    if (this.exited) return;
    const timer = setTimeout(() => this.kill(), graceMs);
    timer.unref();
    void this.gone.then(() => clearTimeout(timer));
    if (this.pending !== undefined || !this.sandbox.connected) this.kill();
    else this.sandbox.send({ type: 'shutdown' });
  }

  private settle(message: Extract<HostMessage, { type: 'result' | 'error' }>): void {
    const pending = this.pending;
    if (pending === undefined || pending.id !== message.id) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    if (message.type === 'result') pending.resolve(message.result);
    else pending.reject(new FunctionError(message.error));
  }

  private fail(error: Error): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.reject(error);
  }
}

/** The variables Lambda sets in every environment, then the function's own. */
function lambdaVariables(options: LocalFunctionOptions): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: 'UTC',
    AWS_REGION: options.region,
    AWS_DEFAULT_REGION: options.region,
    AWS_LAMBDA_FUNCTION_NAME: options.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.memoryMb ?? 256),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${options.name}`,
    ...options.environment,
  };
}

/** A function's pool of execution environments. */
export class LocalFunction {
  private readonly idle: ExecutionEnvironment[] = [];
  private readonly all = new Set<ExecutionEnvironment>();
  private readonly waiting: Array<(environment: ExecutionEnvironment) => void> = [];
  private stopped = false;

  constructor(readonly options: LocalFunctionOptions) {
    this.kind = options.environmentKind ?? environmentKind();
  }

  get name(): string {
    return this.options.name;
  }

  /** Worker threads or child processes (local/runtime/node.ts decides unless the options do). */
  readonly kind: EnvironmentKind;

  /** The log stream of each running environment: one per environment, as on Lambda (for tests and diagnostics). */
  environmentIds(): string[] {
    return [...this.all].map((environment) => environment.logStream);
  }

  /** The process id of each running child-process environment, or the thread id of each worker. */
  environmentPids(): number[] {
    return [...this.all].flatMap((environment) =>
      environment.sandbox.id > 0 ? [environment.sandbox.id] : [],
    );
  }

  /** The heap each running worker-thread environment uses now, in bytes (child processes are left out). */
  async environmentHeapBytes(): Promise<number[]> {
    const heaps = await Promise.all([...this.all].map((environment) => environment.sandbox.heapUsedBytes()));
    return heaps.filter((bytes): bytes is number => bytes !== null);
  }

  /**
   * CPU microseconds used so far by each running environment, by its log stream: what the bench's
   * breakdown of a poll reads, for worker threads and child processes alike.
   */
  async environmentCpuMicros(): Promise<Map<string, number>> {
    const ready = [...this.all].filter((environment) => !environment.exited);
    const answers = await Promise.all(
      ready.map(async (environment) => [environment.logStream, await environment.cpuMicros()] as const),
    );
    return new Map(answers.filter((answer): answer is readonly [string, number] => answer[1] !== null));
  }

  /** Starts one environment now and waits until its module has loaded: a broken bundle fails here. */
  async warm(): Promise<void> {
    const environment = await this.acquire();
    try {
      await environment.ready;
    } finally {
      this.release(environment);
    }
  }

  /** Runs the handler on `event` in a free environment; rejects with FunctionError or InvocationTimeoutError. */
  async invoke(event: unknown, awsRequestId: string = randomUUID()): Promise<unknown> {
    const environment = await this.acquire();
    try {
      await environment.ready;
      return await environment.invoke(event, awsRequestId);
    } finally {
      this.release(environment);
      this.options.afterInvocation?.();
    }
  }

  /** Ends every environment; invocations in progress fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    const exits = [...this.all].map((environment) => environment.gone);
    for (const environment of this.all) environment.shutDown(500);
    await Promise.all(exits);
  }

  private acquire(): Promise<ExecutionEnvironment> {
    if (this.stopped) return Promise.reject(new Error(`${this.name} is stopped`));
    // The most recently used environment first, as Lambda prefers a warm one.
    const warm = this.idle.pop();
    if (warm) return Promise.resolve(warm);
    if (this.all.size < this.options.maxEnvironments) {
      const environment = new ExecutionEnvironment(this.options, this.kind, (gone) => this.forget(gone));
      this.all.add(environment);
      return Promise.resolve(environment);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(environment: ExecutionEnvironment): void {
    if (environment.exited || this.stopped) {
      this.forget(environment);
      return;
    }
    const next = this.waiting.shift();
    if (next) next(environment);
    else this.idle.push(environment);
  }

  /** An environment that ended: its place goes to a new one if an invocation is waiting. */
  private forget(environment: ExecutionEnvironment): void {
    if (!this.all.delete(environment)) return;
    const index = this.idle.indexOf(environment);
    if (index >= 0) this.idle.splice(index, 1);
    const next = this.waiting.shift();
    if (next && !this.stopped) {
      const replacement = new ExecutionEnvironment(this.options, this.kind, (gone) => this.forget(gone));
      this.all.add(replacement);
      next(replacement);
    }
  }
}
