/**
 * One function of the local stack, run the way Lambda runs it: each execution environment is a
 * child process with its own module graph and only the function's environment variables; an
 * environment runs one invocation at a time and stays warm for the next; more environments start
 * for concurrency, up to the function's limit; an invocation past the timeout ends its environment;
 * a crash or a process.exit ends only its own environment.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { ErrorReport, HostMessage } from './protocol.ts';

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
  /** The Node binary of every environment (local/runtime/node.ts). */
  execPath: string;
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
}

interface Pending {
  id: number;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

let nextInvocationId = 1;

/** One execution environment: a child process running local/runtime/host.ts with the function's bundle. */
class ExecutionEnvironment {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  pending: Pending | undefined;
  /** Exited, or being killed: never given another invocation. */
  exited = false;

  constructor(
    private readonly options: LocalFunctionOptions,
    onGone: (environment: ExecutionEnvironment) => void,
  ) {
    this.child = fork(options.host, [options.bundle], {
      execPath: options.execPath,
      // Not this process's flags (a TypeScript loader, inspector ports): a Lambda sandbox has none.
      execArgv: [],
      env: lambdaVariables(options),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => options.log(line));
    }
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: HostMessage) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'init-error') reject(new FunctionError(message.error));
        else this.settle(message);
      };
      this.child.on('message', onMessage);
      let gone = false;
      const end = (errorMessage: string) => {
        if (gone) return;
        gone = true;
        this.exited = true;
        const error = new FunctionError({ errorType: 'Runtime.ExitError', errorMessage, trace: [] });
        reject(error);
        this.fail(error);
        onGone(this);
      };
      this.child.once('exit', (code, signal) =>
        end(`Runtime exited ${signal ? `with signal: ${signal}` : `with error: exit status ${code}`}`),
      );
      // The process could not start (or its channel broke): the environment never existed.
      this.child.once('error', (error) => end(`Runtime failed to start: ${error.message}`));
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
      if (!this.child.connected) {
        this.fail(
          new FunctionError({ errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited', trace: [] }),
        );
        return;
      }
      this.child.send({
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

  kill(): void {
    if (this.exited) return;
    this.exited = true;
    this.child.kill('SIGKILL');
  }

  /** Asks the environment to exit, and kills it if it has not after `graceMs`. */
  shutDown(graceMs: number): void {
    if (this.exited) return;
    const timer = setTimeout(() => this.kill(), graceMs);
    timer.unref();
    this.child.once('exit', () => clearTimeout(timer));
    if (this.pending !== undefined || !this.child.connected) this.kill();
    else this.child.send({ type: 'shutdown' }, (error) => error && this.kill());
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

  constructor(readonly options: LocalFunctionOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** Process ids of the running environments (for tests and diagnostics). */
  environmentPids(): number[] {
    return [...this.all].flatMap((environment) => (environment.child.pid ? [environment.child.pid] : []));
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
    }
  }

  /** Ends every environment; invocations in progress fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    const exits = [...this.all].map(
      (environment) =>
        new Promise<void>((resolve) => {
          if (environment.exited) resolve();
          else environment.child.once('exit', () => resolve());
        }),
    );
    for (const environment of this.all) environment.shutDown(500);
    await Promise.all(exits);
  }

  private acquire(): Promise<ExecutionEnvironment> {
    if (this.stopped) return Promise.reject(new Error(`${this.name} is stopped`));
    // The most recently used environment first, as Lambda prefers a warm one.
    const warm = this.idle.pop();
    if (warm) return Promise.resolve(warm);
    if (this.all.size < this.options.maxEnvironments) {
      const environment = new ExecutionEnvironment(this.options, (gone) => this.forget(gone));
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
      const replacement = new ExecutionEnvironment(this.options, (gone) => this.forget(gone));
      this.all.add(replacement);
      next(replacement);
    }
  }
}
