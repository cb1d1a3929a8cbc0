/*
 * The optimize bench's simulated pipeline: three settings (a retrieval timeout, a token budget, a
 * temperature), cases drawn from a seeded generator, and three traps — a change past a threshold
 * breaks cases that passed (stale context past a long timeout, rambling past a large budget,
 * repetition at a very low temperature). The synthesis never sees this module: only the results.
 */
export interface SimCase {
  id: string;
  needMs: number;
  staleMs?: number;
  needTokens: number;
  conciseTokens?: number;
  maxTemp: number;
  minTemp?: number;
}

export interface SimSettings {
  timeoutMs: number;
  maxTokens: number;
  temperature: number;
}

export const BASE_SETTINGS: SimSettings = { timeoutMs: 800, maxTokens: 128, temperature: 1.3 };

/** mulberry32: a small seeded generator, so every bench run draws the same cases. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generateCases(random: () => number, count: number, prefix: string): SimCase[] {
  const between = (low: number, high: number) => low + random() * (high - low);
  return Array.from({ length: count }, (_, index) => {
    const entry: SimCase = {
      id: `${prefix}-${String(index).padStart(4, '0')}`,
      needMs: Math.round(random() < 0.65 ? between(200, 780) : between(850, 2300)),
      needTokens: Math.round(random() < 0.65 ? between(40, 125) : between(140, 600)),
      maxTemp: random() < 0.7 ? 2 : Math.round(between(0.35, 1.2) * 100) / 100,
    };
    if (random() < 0.15) entry.staleMs = Math.round(between(3300, 4200));
    if (random() < 0.15) entry.conciseTokens = Math.round(between(700, 1000));
    if (random() < 0.15) entry.minTemp = Math.round(between(0.15, 0.3) * 100) / 100;
    return entry;
  });
}

/** What the pipeline does with a case: the first reason it fails, with the slot it fails in. */
export function simulate(
  settings: SimSettings,
  entry: SimCase,
): { passed: true } | { passed: false; slotId: string; error: string } {
  const fail = (slotId: string, error: string) => ({ passed: false as const, slotId, error });
  if (settings.timeoutMs < entry.needMs) return fail('retrieve', 'retrieval timed out');
  if (entry.staleMs !== undefined && settings.timeoutMs > entry.staleMs)
    return fail('retrieve', 'stale context: the retrieval waited past the index refresh');
  if (settings.maxTokens < entry.needTokens) return fail('answer', 'output truncated at max tokens');
  if (entry.conciseTokens !== undefined && settings.maxTokens > entry.conciseTokens)
    return fail('answer', 'answer rambled past the concise limit');
  if (settings.temperature > entry.maxTemp) return fail('answer', 'malformed JSON output');
  if (entry.minTemp !== undefined && settings.temperature < entry.minTemp)
    return fail('answer', 'repetitive answer');
  return { passed: true };
}
