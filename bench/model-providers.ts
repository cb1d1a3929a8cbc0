/*
 * `npm run bench -- bedrock caching`: claude-v1 on Amazon Bedrock against the Anthropic API, both
 * through their real SDKs against local fakes with the same latency: the time from a run's start to
 * its proposal (median of interleaved runs), the same run on both (calls, repair, proposal, no call
 * after a permanent fault), and what the prompt cache saves on a second run of the same prompt.
 */
import { costUsd, DEFAULT_MODEL_PRICES } from '../lambdas/core/model-pricing.ts';
import type { SynthesisEngine, SynthesisProposal } from '../lambdas/core/ports/synthesis.ts';
import { createClaudeV1 } from '../lambdas/synthesis/claude/engine.ts';
import { createBedrockClient } from '../lambdas/wiring/bedrock-client.ts';
import { errorReply, startAnthropicFake, toolReply } from '../test/support/anthropic-fake.ts';
import { accessDenied, FAKE_BEDROCK_MODEL, startBedrockFake } from '../test/support/bedrock-fake.ts';
import { context, goodDraft } from '../test/unit/synthesis/claude/harness.ts';

const LATENCY_MS = 120;
const RUNS = 15;
const LIMITS = { maxTokens: 4_096, timeBudgetMs: 30_000, requestTimeoutMs: 10_000, maxRetries: 0 };

interface Fakes {
  anthropic: Awaited<ReturnType<typeof startAnthropicFake>>;
  bedrock: Awaited<ReturnType<typeof startBedrockFake>>;
}

function engines(fakes: Fakes): { anthropic: SynthesisEngine; bedrock: SynthesisEngine } {
  const key = async () => 'bench-key';
  const settings = { model: FAKE_BEDROCK_MODEL, region: 'us-east-1', baseURL: fakes.bedrock.url };
  return {
    anthropic: createClaudeV1({
      ...LIMITS,
      keys: { description: 'the bench', get: key, refresh: key },
      baseURL: fakes.anthropic.url,
      model: 'claude-sonnet-4-6',
    }),
    bedrock: createClaudeV1({
      ...LIMITS,
      provider: 'bedrock',
      region: 'us-east-1',
      client: async () => createBedrockClient(settings, LIMITS.requestTimeoutMs),
      model: FAKE_BEDROCK_MODEL,
    }),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const comparable = (proposal: SynthesisProposal) => JSON.stringify({ ...proposal, usage: undefined });

async function withFakes<T>(
  options: { latencyMs?: number; promptCache?: boolean },
  work: (fakes: Fakes) => Promise<T>,
) {
  // The local stack's credentials, which the Bedrock fake knows.
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  const [anthropic, bedrock] = await Promise.all([
    startAnthropicFake({ autoReply: true, ...options }),
    startBedrockFake({ autoReply: true, ...options }),
  ]);
  try {
    return await work({ anthropic, bedrock });
  } finally {
    await Promise.all([anthropic.close(), bedrock.close()]);
  }
}

export interface ProviderFigures {
  anthropicMs: number;
  bedrockMs: number;
  calls: { good: [number, number]; repaired: [number, number]; afterPermanent: [number, number] };
  sameProposal: boolean;
}

export async function measureProviders(): Promise<ProviderFigures> {
  return withFakes({ latencyMs: LATENCY_MS }, async (fakes) => {
    const claude = engines(fakes);
    // One warm-up each: the first Bedrock run imports its SDK part, as a worker's first job does.
    await Promise.all([claude.anthropic.generate(context()), claude.bedrock.generate(context())]);
    const times = { anthropic: [] as number[], bedrock: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      for (const provider of run % 2 === 0
        ? (['anthropic', 'bedrock'] as const)
        : (['bedrock', 'anthropic'] as const)) {
        const started = performance.now();
        await claude[provider].generate(context());
        times[provider].push(performance.now() - started);
      }
    }
    const calls = async (
      script: (fake: Fakes['anthropic'] | Fakes['bedrock']) => void,
    ): Promise<[number, number]> => {
      const counts: number[] = [];
      for (const provider of ['anthropic', 'bedrock'] as const) {
        const fake = fakes[provider];
        fake.reset();
        script(fake);
        await claude[provider].generate(context()).catch(() => undefined);
        counts.push(fake.requests.length);
      }
      return [counts[0] ?? -1, counts[1] ?? -1];
    };
    const good = await calls((fake) => fake.script(toolReply(goodDraft())));
    const repaired = await calls((fake) =>
      fake.script(toolReply({ diagnosis: 'broken' }), toolReply(goodDraft())),
    );
    const afterPermanent = await calls((fake) =>
      fake.script(
        'region' in fake ? accessDenied() : errorReply(403, 'permission_error', 'denied'),
        toolReply(goodDraft()),
      ),
    );
    fakes.anthropic.script(toolReply(goodDraft()));
    fakes.bedrock.script(toolReply(goodDraft()));
    const [a, b] = await Promise.all([
      claude.anthropic.generate(context()),
      claude.bedrock.generate(context()),
    ]);
    return {
      anthropicMs: median(times.anthropic),
      bedrockMs: median(times.bedrock),
      calls: { good, repaired, afterPermanent },
      sameProposal: comparable(a) === comparable(b),
    };
  });
}

export function formatProviders(figures: ProviderFigures, verdict: (ok: boolean) => string): string {
  const ratio = figures.bedrockMs / Math.max(1, figures.anthropicMs);
  const { good, repaired, afterPermanent } = figures.calls;
  const same =
    good[0] === 1 &&
    good[1] === 1 &&
    repaired[0] === 2 &&
    repaired[1] === 2 &&
    afterPermanent[0] === 1 &&
    afterPermanent[1] === 1;
  return [
    `start → proposal at ${LATENCY_MS} ms of fake model latency, median of ${RUNS}: Anthropic API ${figures.anthropicMs.toFixed(0)} ms, Bedrock ${figures.bedrockMs.toFixed(0)} ms (${ratio.toFixed(2)} ×; target ≤ 1.2 ×): ${verdict(ratio <= 1.2)}`,
    `model calls (Anthropic / Bedrock): good reply ${good.join(' / ')}, with a repair ${repaired.join(' / ')}, denied ${afterPermanent.join(' / ')} (0 after the permanent fault); same proposal: ${figures.sameProposal ? 'yes' : 'no'}: ${verdict(same && figures.sameProposal)}`,
  ].join('\n');
}

export interface CachingFigures {
  provider: string;
  first: { costUsd: number; cacheWrite: number; cacheRead: number };
  second: { costUsd: number; cacheWrite: number; cacheRead: number };
}

export async function measureCaching(): Promise<CachingFigures[]> {
  return withFakes({ promptCache: true }, async (fakes) => {
    const claude = engines(fakes);
    const figures: CachingFigures[] = [];
    for (const provider of ['anthropic', 'bedrock'] as const) {
      const runs = [];
      for (let run = 0; run < 2; run++) {
        const usage = (await claude[provider].generate(context())).usage;
        if (!usage) throw new Error('no usage');
        runs.push({
          costUsd: costUsd(usage, DEFAULT_MODEL_PRICES) ?? Number.NaN,
          cacheWrite: usage.cacheWriteInputTokens ?? 0,
          cacheRead: usage.cacheReadInputTokens ?? 0,
        });
      }
      const [first, second] = runs;
      if (first && second) figures.push({ provider, first, second });
    }
    return figures;
  });
}

export function formatCaching(figures: CachingFigures[], verdict: (ok: boolean) => string): string {
  return figures
    .map(({ provider, first, second }) => {
      const ratio = second.costUsd / first.costUsd;
      return `${provider}: first run $${first.costUsd.toFixed(6)} (${first.cacheWrite} tokens written to the cache), second run of the same prompt $${second.costUsd.toFixed(6)} (${second.cacheRead} read from it): ${ratio.toFixed(2)} × (target ≤ 0.4 ×, cache reads reported): ${verdict(ratio <= 0.4 && second.cacheRead > 0)}`;
    })
    .join('\n');
}
