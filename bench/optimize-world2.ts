/*
 * The optimize bench's second simulated pipeline, written apart from the first (and before the
 * search was tuned on it): the retrieval timeout must move 3.5 × from its base of 1000 ms (most
 * failing cases need 2800–3500 ms), with traps on both sides — past 3600 ms a fifth of the cases
 * read a stale index, and under 950 ms the reranker's share of the budget runs out. The answer
 * slot's token budget starts a little short, so more than one setting moves.
 */
import type { Slot } from '../lambdas/core/schemas/pipelines.ts';
import type { SimWorld } from './optimize.ts';

export interface Case2 {
  id: string;
  needMs: number;
  staleMs?: number;
  rerankFloorMs?: number;
  needTokens: number;
}

export interface Settings2 {
  timeoutMs: number;
  maxTokens: number;
}

const BASE: Settings2 = { timeoutMs: 1_000, maxTokens: 300 };

const SLOTS: Slot[] = [
  { id: 'search', name: 'Search', kind: 'retrieval', settings: { topK: 20, timeoutMs: BASE.timeoutMs } },
  {
    id: 'reply',
    name: 'Reply',
    kind: 'model',
    settings: { model: 'm', maxTokens: BASE.maxTokens, temperature: 0.2 },
  },
];

function generate(random: () => number, count: number, prefix: string): Case2[] {
  const between = (low: number, high: number) => Math.round(low + random() * (high - low));
  return Array.from({ length: count }, (_, index) => {
    const roll = random();
    const entry: Case2 = {
      id: `${prefix}-${String(index).padStart(4, '0')}`,
      needMs: roll < 0.5 ? between(300, 990) : roll < 0.6 ? between(1_000, 2_800) : between(2_800, 3_500),
      needTokens: random() < 0.85 ? between(60, 290) : between(310, 420),
    };
    if (random() < 0.2) entry.staleMs = between(3_600, 4_500);
    if (random() < 0.2) entry.rerankFloorMs = between(900, 950);
    return entry;
  });
}

function simulate(settings: Settings2, entry: Case2) {
  const fail = (slotId: string, error: string) => ({ passed: false as const, slotId, error });
  if (entry.rerankFloorMs !== undefined && settings.timeoutMs < entry.rerankFloorMs)
    return fail('search', 'reranker skipped: its share of the timeout ran out');
  if (settings.timeoutMs < entry.needMs) return fail('search', 'search timed out');
  if (entry.staleMs !== undefined && settings.timeoutMs > entry.staleMs)
    return fail('search', 'stale results: the search outlived the index refresh');
  if (settings.maxTokens < entry.needTokens) return fail('reply', 'output truncated at max tokens');
  return { passed: true as const };
}

function settingsOf(slots: readonly Slot[]): Settings2 {
  const read = (slotId: string, key: string) =>
    Number(slots.find((slot) => slot.id === slotId)?.settings[key]);
  return { timeoutMs: read('search', 'timeoutMs'), maxTokens: read('reply', 'maxTokens') };
}

export const WORLD_2: SimWorld<Case2, Settings2> = {
  name: 'world 2 (timeout 3.5 × the base, traps on both sides)',
  slots: SLOTS,
  base: BASE,
  generate,
  simulate,
  settingsOf,
};
