/*
 * The optimize bench with claude-v1 for the plumbing: the real engine and SDK against the local
 * fake Messages API (its automatic replies), on the same simulated pipeline and targets as
 * heuristic-v1. The figures are the fake's answers; what is checked here is that every refinement's
 * request carried its parent's evaluation and no held-out case.
 */

import { createClaudeV1 } from '../lambdas/synthesis/claude/engine.ts';
import { ANTHROPIC_DEFAULTS } from '../lambdas/wiring/anthropic.ts';
import { startAnthropicFake } from '../test/support/anthropic-fake.ts';
import { measureOptimize, type OptimizeFigures } from './optimize.ts';

export interface ClaudeOptimizeFigures {
  figures: OptimizeFigures;
  requests: number;
  /** Requests after the first round that carried the refinement section. */
  refinementsWithEvaluation: number;
  /** Requests that named a held-out case (the simulated held-out ids start "held-"). */
  requestsNamingHeldOut: number;
}

export async function measureClaudeOptimize(): Promise<ClaudeOptimizeFigures> {
  const fake = await startAnthropicFake({ autoReply: true });
  try {
    const key = async () => 'fake-key-for-the-local-fake';
    const engine = createClaudeV1({
      ...ANTHROPIC_DEFAULTS,
      keys: { description: 'the bench', get: key, refresh: key },
      baseURL: fake.url,
      maxRetries: 0,
    });
    const figures = await measureOptimize(engine);
    const prompts = fake.requests.map((request) => request.raw);
    return {
      figures,
      requests: prompts.length,
      refinementsWithEvaluation: prompts.slice(1).filter((raw) => raw.includes('This run refines run round-'))
        .length,
      requestsNamingHeldOut: prompts.filter((raw) => raw.includes('held-0')).length,
    };
  } finally {
    await fake.close();
  }
}

export function formatClaudePlumbing(measured: ClaudeOptimizeFigures): string {
  const rounds = measured.figures.rounds.length;
  const ok =
    measured.requests === rounds &&
    measured.refinementsWithEvaluation === rounds - 1 &&
    measured.requestsNamingHeldOut === 0;
  return `claude-v1 plumbing: ${measured.requests} requests for ${rounds} rounds, ${measured.refinementsWithEvaluation} of ${rounds - 1} refinements carried the parent's evaluation, ${measured.requestsNamingHeldOut} named a held-out case: ${ok ? 'ok' : 'MISSED'}`;
}
