/** A local stack whose worker calls the fake Messages API (no retries inside a run), for e2e and fuzz tests. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AbuseLimits, DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type AnthropicFake, startAnthropicFake } from './anthropic-fake.ts';

const MODEL_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MAX_RETRIES'] as const;

export interface StackWithModelFake {
  stack: LocalStack;
  fake: AnthropicFake;
  /** Stops both and restores the environment. */
  stop(): Promise<void>;
}

export async function startStackWithModelFake(options: {
  name: string;
  limits: Partial<AbuseLimits>;
  log?: (line: string) => void;
}): Promise<StackWithModelFake> {
  const saved = Object.fromEntries(MODEL_VARIABLES.map((name) => [name, process.env[name]]));
  const fake = await startAnthropicFake({ autoReply: true });
  // The worker's model settings come from the developer's environment, as with `npm start`; no
  // retries inside a run, so a transient fault goes back to the queue at once.
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: 'fake-key',
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_MAX_RETRIES: '0',
  });
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), `${options.name}-`)),
    log: options.log ?? (() => {}),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  });
  return {
    stack,
    fake,
    async stop() {
      await stack.stop();
      await fake.close();
      for (const name of MODEL_VARIABLES) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    },
  };
}
