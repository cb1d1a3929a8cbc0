/**
 * Runs test handler modules (test/support/fake-handlers, or any handler file) as local functions,
 * each in its own environments, of the kind the local stack would pick or of the kind asked for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Invoke } from '../../local/gateway/server.ts';
import { buildFunctions } from '../../local/runtime/bundles.ts';
import { LocalFunction } from '../../local/runtime/lambda-function.ts';
import { functionNode } from '../../local/runtime/node.ts';
import type { EnvironmentKind } from '../../local/runtime/sandboxes.ts';

const FAKE_HANDLERS = path.join(import.meta.dirname, 'fake-handlers');

export interface FakeFunctionSpec {
  entry: string;
  /** The handler's file; test/support/fake-handlers/<entry>.ts by default. */
  entryFile?: string;
  environment?: Record<string, string>;
  timeoutMs?: number;
  memoryMb?: number;
  maxEnvironments?: number;
}

export interface FakeFunctions {
  functions: Map<string, LocalFunction>;
  invoke: Invoke;
  /** Every line the functions wrote, prefixed with `[name]`. */
  lines: string[];
  /** The function of each invocation that ended, in the order they ended (afterInvocation). */
  ended: string[];
  stop(): Promise<void>;
}

export async function startFakeFunctions(
  specs: FakeFunctionSpec[],
  environmentKind?: EnvironmentKind,
): Promise<FakeFunctions> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'local-functions-'));
  const built = await buildFunctions(
    specs.map((spec) => ({
      name: spec.entry,
      entryFile: spec.entryFile ?? path.join(FAKE_HANDLERS, `${spec.entry}.ts`),
    })),
    outDir,
  );
  const node = functionNode();
  const lines: string[] = [];
  const ended: string[] = [];
  const functions = new Map(
    specs.map((spec) => [
      spec.entry,
      new LocalFunction({
        name: `test-${spec.entry}`,
        bundle: built.bundles.get(spec.entry) ?? '',
        host: built.host,
        execPath: node.execPath,
        environment: spec.environment ?? {},
        timeoutMs: spec.timeoutMs ?? 10_000,
        ...(spec.memoryMb === undefined ? {} : { memoryMb: spec.memoryMb }),
        ...(environmentKind === undefined ? {} : { environmentKind }),
        maxEnvironments: spec.maxEnvironments ?? 2,
        region: 'us-east-1',
        accountId: '000000000000',
        log: (line) => lines.push(`[test-${spec.entry}] ${line}`),
        afterInvocation: () => ended.push(spec.entry),
      }),
    ]),
  );
  return {
    functions,
    lines,
    ended,
    invoke: (entry, event, requestId) => {
      const fn = functions.get(entry);
      if (fn === undefined) return Promise.reject(new Error(`no function ${entry}`));
      return fn.invoke(event, requestId);
    },
    async stop() {
      await Promise.all([...functions.values()].map((fn) => fn.stop()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}
