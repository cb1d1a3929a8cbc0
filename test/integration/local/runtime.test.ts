/**
 * The local function runtime keeps Lambda's guarantees in either kind of environment: worker
 * threads (when this Node is Lambda's major) and child processes (on any Node).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctionsCached } from '../../../local/runtime/bundles.ts';
import { FunctionError, InvocationTimeoutError } from '../../../local/runtime/lambda-function.ts';
import { environmentKind, functionNode, LAMBDA_NODE_MAJOR } from '../../../local/runtime/node.ts';
import type { EnvironmentKind } from '../../../local/runtime/sandboxes.ts';
import { type FakeFunctions, startFakeFunctions } from '../../support/local-functions.ts';
import { waitFor } from '../../support/wait.ts';

interface Answer {
  pid: number;
  startedAt: number;
  endedAt: number;
  invocations: number;
  node: string;
  env: Record<string, string | null>;
}

const LAMBDA_MAJOR_HERE = Number(process.versions.node.split('.')[0]) === LAMBDA_NODE_MAJOR;
// Worker threads run on this process's Node: they are only used (and tested) when it is Lambda's.
const KINDS: EnvironmentKind[] = LAMBDA_MAJOR_HERE ? ['worker', 'process'] : ['process'];

describe.each(KINDS)('local functions run like Lambda functions (%s environments)', (kind) => {
  let fake: FakeFunctions;
  /** An environment's identity: its log stream, one per environment as on Lambda. */
  const environmentOf = (answer: Answer) => answer.env.AWS_LAMBDA_LOG_STREAM_NAME as string;
  const invoke = async (entry: string, event: { names?: string[] } & Record<string, unknown>) =>
    (await fake.invoke(
      entry,
      { ...event, names: [...(event.names ?? []), 'AWS_LAMBDA_LOG_STREAM_NAME'] },
      crypto.randomUUID(),
    )) as Answer;

  beforeAll(async () => {
    // A variable of the test process itself: no function may see it.
    process.env.SHARED_BY_NO_FUNCTION = 'leak';
    fake = await startFakeFunctions(
      [
        { entry: 'environment', environment: { ONLY_FIRST: 'first' }, maxEnvironments: 4 },
        { entry: 'echo', environment: { ONLY_SECOND: 'second' } },
        { entry: 'slow', timeoutMs: 200 },
        { entry: 'json-boundary', maxEnvironments: 1 },
      ],
      kind,
    );
  });
  afterAll(async () => {
    delete process.env.SHARED_BY_NO_FUNCTION;
    await fake.stop();
  });

  it('gives each function only its own environment variables, plus Lambda’s', async () => {
    const names = ['ONLY_FIRST', 'ONLY_SECOND', 'SHARED_BY_NO_FUNCTION', 'AWS_LAMBDA_FUNCTION_NAME', 'TZ'];
    const first = await invoke('environment', { names });
    const second = (await fake.invoke('echo', {}, 'r-1')) as { body: string };

    expect(first.env).toMatchObject({
      ONLY_FIRST: 'first',
      ONLY_SECOND: null,
      SHARED_BY_NO_FUNCTION: null,
      AWS_LAMBDA_FUNCTION_NAME: 'test-environment',
      TZ: 'UTC',
    });
    expect(Object.keys(first.env).sort()).toEqual([...names, 'AWS_LAMBDA_LOG_STREAM_NAME'].sort());
    expect(JSON.parse(second.body).context.functionName).toBe('test-echo');
    expect(fake.functions.get('environment')?.kind).toBe(kind);
    expect(fake.functions.get('environment')?.environmentIds()).toContain(environmentOf(first));
    expect(fake.functions.get('echo')?.environmentIds()).not.toContain(environmentOf(first));
  });

  it('keeps module state between sequential invocations of one warm environment', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await invoke('environment', {}));

    expect(new Set(answers.map(environmentOf)).size).toBe(1);
    const counts = answers.map((answer) => answer.invocations);
    expect(counts[1]).toBe((counts[0] ?? 0) + 1);
    expect(counts[2]).toBe((counts[0] ?? 0) + 2);
  });

  it('never runs two invocations at once in one environment: concurrency starts more, up to the limit', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => invoke('environment', { sleepMs: 150 })),
    );
    const environments = new Set(answers.map(environmentOf));

    // More than one environment, four at most; within each, the invocations ran one after another.
    expect(environments.size).toBeGreaterThan(1);
    expect(environments.size).toBeLessThanOrEqual(4);
    for (const environment of environments) {
      const runs = answers
        .filter((answer) => environmentOf(answer) === environment)
        .sort((a, b) => a.startedAt - b.startedAt);
      for (let i = 1; i < runs.length; i++)
        expect(runs[i]?.startedAt).toBeGreaterThanOrEqual(runs[i - 1]?.endedAt as number);
    }
  });

  it('runs on Lambda’s Node major where its package is installed', async () => {
    const answer = await invoke('environment', {});
    const node = functionNode();

    if (kind === 'worker' || node.warning === undefined)
      expect(Number(answer.node.split('.')[0])).toBe(LAMBDA_NODE_MAJOR);
    else expect(answer.node).toBe(process.versions.node);
  });

  it('ends an invocation past the timeout as Lambda reports it, and its environment with it', async () => {
    const failure = fake.invoke('slow', {}, 'r-2');

    await expect(failure).rejects.toBeInstanceOf(InvocationTimeoutError);
    await expect(failure).rejects.toThrow('Task timed out after 0.20 seconds');
    expect(fake.functions.get('slow')?.environmentIds()).toEqual([]);
  });

  it('tells the stack each time an invocation has ended, answered or failed (it wakes stream readers)', async () => {
    const before = fake.ended.length;
    const answered = fake.invoke('echo', {}, 'r-3');
    // Not before the answer: a write the function made must be committed when the readers look.
    expect(fake.ended.slice(before)).toEqual([]);
    await answered;
    expect(fake.ended.slice(before)).toEqual(['echo']);
    await expect(fake.invoke('slow', {}, 'r-4')).rejects.toBeInstanceOf(InvocationTimeoutError);
    expect(fake.ended.slice(before)).toEqual(['echo', 'slow']);
  });

  it('a process.exit or an uncaught exception ends only its own environment', async () => {
    const bystander = await invoke('environment', { sleepMs: 0 });
    const [exited, crashed, meanwhile] = await Promise.allSettled([
      invoke('environment', { exit: true }),
      invoke('environment', { crash: true }),
      invoke('environment', { sleepMs: 50 }),
    ]);

    expect(exited).toMatchObject({ status: 'rejected', reason: expect.any(FunctionError) });
    expect((exited as PromiseRejectedResult).reason.message).toBe('Runtime exited with error: exit status 3');
    expect((crashed as PromiseRejectedResult).reason.message).toMatch(/Runtime exited/);
    expect(meanwhile.status).toBe('fulfilled');
    // The environments that ended are gone; the others, and the other functions', still serve.
    expect(environmentOf(bystander)).toMatch(/\[\$LATEST\]/);
    expect((await invoke('environment', {})).invocations).toBeGreaterThan(0);
    expect(fake.functions.get('echo')?.environmentIds().length).toBeGreaterThan(0);
    // The crash's error reaches the log, as a child process prints it before it dies.
    await waitFor(() => fake.lines.some((line) => line.includes('uncaught in a timer')), 'the crash');
  });

  it('hands the event and the result across as JSON, as Lambda does', async () => {
    const event = { when: new Date(0), missing: undefined };
    const result = (await fake.invoke('json-boundary', { ...event, returns: 'odd' }, 'r-json')) as Record<
      string,
      unknown
    >;

    expect(result).toEqual({
      seen: { when: 'string', hasMissing: false },
      date: '1970-01-01T00:00:00.000Z',
      nan: null,
      negativeZero: 0,
      map: {},
      custom: 'custom',
    });
    expect(Object.is(result.negativeZero, 0)).toBe(true);
    expect(result).not.toHaveProperty('missing');
    expect(await fake.invoke('json-boundary', { returns: 'nothing' }, 'r-none')).toBeNull();
  });

  it('fails an invocation whose result JSON cannot write, and keeps its environment', async () => {
    const [environment] = fake.functions.get('json-boundary')?.environmentIds() ?? [];
    const failure = fake.invoke('json-boundary', { returns: 'cycle' }, 'r-cycle');

    await expect(failure).rejects.toBeInstanceOf(FunctionError);
    await expect(failure).rejects.toMatchObject({ name: 'TypeError', message: /circular/i });
    expect(await fake.invoke('json-boundary', { returns: 'odd' }, 'r-after')).toHaveProperty('nan', null);
    expect(fake.functions.get('json-boundary')?.environmentIds()).toEqual([environment]);
  });

  it('reports the CPU time each environment has used', async () => {
    await invoke('echo', {});
    const usage = (await fake.functions.get('echo')?.environmentCpuMicros()) ?? new Map();

    expect([...usage.keys()]).toEqual(fake.functions.get('echo')?.environmentIds());
    for (const micros of usage.values()) expect(micros).toBeGreaterThan(0);
  });

  it('passes each line a function writes to the log, as it happens', async () => {
    await invoke('environment', { log: 'something went wrong in run r-9' });
    // stdout is a pipe of its own: the line may arrive just after the result.
    await waitFor(() => fake.lines.some((line) => line.includes('r-9')), 'the log line');

    expect(fake.lines).toContainEqual(
      '[test-environment] {"level":"ERROR","message":"something went wrong in run r-9"}',
    );
  });
});

describe('the bundle cache of the local stack', () => {
  it('reuses bundles while their inputs are unchanged and rebuilds when one changes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bundle-cache-'));
    const entryFile = path.join(dir, 'answer.ts');
    const functions = [{ name: 'answer', entryFile }];
    await writeFile(entryFile, 'export const handler = async () => 1;\n');

    const first = await buildFunctionsCached(functions, path.join(dir, 'cache'));
    const again = await buildFunctionsCached(functions, path.join(dir, 'cache'));
    await writeFile(entryFile, 'export const handler = async () => 22;\n');
    const changed = await buildFunctionsCached(functions, path.join(dir, 'cache'));

    expect(again.bundles.get('answer')).toBe(first.bundles.get('answer'));
    expect(changed.bundles.get('answer')).not.toBe(first.bundles.get('answer'));
    expect(await readFile(changed.bundles.get('answer') as string, 'utf8')).toContain('22');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('which environments the local stack starts', () => {
  const utc24 = { version: `${LAMBDA_NODE_MAJOR}.1.0`, timeZone: 'UTC' };

  it('uses worker threads on Lambda’s Node major in UTC, child processes elsewhere or when asked', () => {
    expect(environmentKind({}, utc24)).toBe('worker');
    expect(environmentKind({ LOCAL_ENVIRONMENTS: 'processes' }, utc24)).toBe('process');
    expect(environmentKind({}, { version: '20.19.0', timeZone: 'UTC' })).toBe('process');
    // A worker cannot have a time zone of its own: away from UTC, processes keep Lambda's.
    expect(environmentKind({}, { ...utc24, timeZone: 'Europe/Paris' })).toBe('process');
  });
});

describe.runIf(LAMBDA_MAJOR_HERE)('worker-thread environments', () => {
  it('report the heap each environment keeps (what the webhooks bench samples)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'keeper-'));
    const entryFile = path.join(dir, 'keeper.ts');
    await writeFile(
      entryFile,
      [
        'const kept: string[][] = [];',
        'export const handler = async (event: { keep?: number }) => {',
        '  for (let i = 0; i < (event.keep ?? 0); i++) kept.push(Array.from({ length: 100_000 }, (_, n) => String(i * 1_000_000 + n)));',
        '  return kept.length;',
        '};',
      ].join('\n'),
    );
    const fake = await startFakeFunctions([{ entry: 'keeper', entryFile, maxEnvironments: 1 }], 'worker');
    try {
      const keeper = fake.functions.get('keeper');
      expect(await keeper?.environmentHeapBytes()).toEqual([]);
      await fake.invoke('keeper', {}, 'r-small');
      const [before = 0] = (await keeper?.environmentHeapBytes()) ?? [];
      await fake.invoke('keeper', { keep: 5 }, 'r-large');
      const [after = 0] = (await keeper?.environmentHeapBytes()) ?? [];

      expect(before).toBeGreaterThan(0);
      // Half a million kept strings: well over 10 MB more than the idle environment.
      expect(after - before).toBeGreaterThan(10 * 2 ** 20);
    } finally {
      await fake.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // A child process's heap is bounded as a worker's is: unbounded, an OTLP bomb grew one to the
  // machine's memory and the stack went down with it.
  it.each(['worker', 'process'] as const)(
    'end only their own environment when a function outgrows its memory size (%s)',
    async (kind) => {
      const dir = await mkdtemp(path.join(tmpdir(), 'hungry-'));
      const entryFile = path.join(dir, 'hungry.ts');
      await writeFile(
        entryFile,
        [
          'const kept: string[][] = [];',
          'export const handler = async (event: { grow?: boolean }) => {',
          '  while (event.grow) kept.push(Array.from({ length: 100_000 }, (_, i) => String(i)));',
          '  return kept.length;',
          '};',
        ].join('\n'),
      );
      const fake = await startFakeFunctions([{ entry: 'hungry', entryFile, memoryMb: 128 }], kind);
      try {
        const grown = fake.invoke('hungry', { grow: true }, 'r-oom');

        await expect(grown).rejects.toThrow(/Runtime exited/);
        expect(await fake.invoke('hungry', {}, 'r-after')).toBe(0);
        expect(fake.lines.join('\n')).toMatch(/memory/i);
      } finally {
        await fake.stop();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
