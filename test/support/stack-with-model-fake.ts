/**
 * A local stack whose worker calls a model fake (no retries inside a run), for e2e and fuzz tests:
 * the Messages API fake, or with `provider: 'bedrock'` the Bedrock InvokeModel fake, which checks
 * the SigV4 signature of the local stack's credentials.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AbuseLimits, DEFAULT_LIMITS } from '../../lambdas/limits.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { type AnthropicFake, startAnthropicFake } from './anthropic-fake.ts';
import { type BedrockFake, FAKE_BEDROCK_MODEL, startBedrockFake } from './bedrock-fake.ts';

const MODEL_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_MAX_RETRIES',
  'MODEL_PROVIDER',
  'BEDROCK_BASE_URL',
  'BEDROCK_MODEL_ID',
] as const;

export interface StackWithModelFake {
  stack: LocalStack;
  fake: AnthropicFake;
  /** Stops both and restores the environment. */
  stop(): Promise<void>;
}

export interface StackWithBedrockFake {
  stack: LocalStack;
  fake: BedrockFake;
  stop(): Promise<void>;
}

interface StackOptions {
  name: string;
  limits: Partial<AbuseLimits>;
  log?: (line: string) => void;
}

export function startStackWithModelFake(options: StackOptions): Promise<StackWithModelFake>;
export function startStackWithModelFake(
  options: StackOptions & { provider: 'bedrock' },
): Promise<StackWithBedrockFake>;
export async function startStackWithModelFake(
  options: StackOptions & { provider?: 'anthropic' | 'bedrock' },
): Promise<StackWithModelFake | StackWithBedrockFake> {
  const saved = Object.fromEntries(MODEL_VARIABLES.map((name) => [name, process.env[name]]));
  const fake =
    options.provider === 'bedrock'
      ? await startBedrockFake({ autoReply: true })
      : await startAnthropicFake({ autoReply: true });
  // The worker's model settings come from the developer's environment, as with `npm start`; no
  // retries inside a run, so a transient fault goes back to the queue at once.
  Object.assign(
    process.env,
    options.provider === 'bedrock'
      ? {
          MODEL_PROVIDER: 'bedrock',
          BEDROCK_BASE_URL: fake.url,
          BEDROCK_MODEL_ID: FAKE_BEDROCK_MODEL,
          ANTHROPIC_MAX_RETRIES: '0',
        }
      : { ANTHROPIC_API_KEY: 'fake-key', ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_MAX_RETRIES: '0' },
  );
  const stack = await startLocalStack({
    port: 0,
    quiet: true,
    stateDir: await mkdtemp(path.join(tmpdir(), `${options.name}-`)),
    log: options.log ?? (() => {}),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  });
  return {
    stack,
    // biome-ignore lint/suspicious/noExplicitAny: the overloads above type it by provider
    fake: fake as any,
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
