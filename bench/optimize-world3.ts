/*
 * The optimize bench's third simulated pipeline, written after the search was last changed and
 * not tuned to: the answer's token budget must move about 4 × from its base of 150 (most failing
 * cases need 480–600 tokens), the retrieval deadline a little (1,200 ms → up to 1,650), with traps
 * above both — past 680 tokens a sixth of the answers outgrow the channel's message limit, past
 * 1,900 ms a tenth of the searches read a stale shard. Its error texts are worded as other
 * providers word them, not as worlds 1 and 2 do.
 */
import type { Slot } from '../lambdas/core/schemas/pipelines.ts';
import type { SimWorld } from './optimize.ts';

export interface Case3 {
  id: string;
  needTokens: number;
  channelTokens?: number;
  needMs: number;
  staleMs?: number;
}

export interface Settings3 {
  maxTokens: number;
  timeoutMs: number;
}

const BASE: Settings3 = { maxTokens: 150, timeoutMs: 1_200 };

const SLOTS: Slot[] = [
  { id: 'lookup', name: 'Lookup', kind: 'retrieval', settings: { topK: 8, timeoutMs: BASE.timeoutMs } },
  {
    id: 'compose',
    name: 'Compose',
    kind: 'model',
    settings: { model: 'm', maxTokens: BASE.maxTokens, temperature: 0.4 },
  },
];

function generate(random: () => number, count: number, prefix: string): Case3[] {
  const between = (low: number, high: number) => Math.round(low + random() * (high - low));
  return Array.from({ length: count }, (_, index) => {
    const roll = random();
    const entry: Case3 = {
      id: `${prefix}-${String(index).padStart(4, '0')}`,
      needTokens: roll < 0.55 ? between(40, 150) : roll < 0.65 ? between(160, 470) : between(480, 600),
      needMs: random() < 0.85 ? between(200, 1_200) : between(1_250, 1_650),
    };
    if (random() < 0.16) entry.channelTokens = between(680, 900);
    if (random() < 0.1) entry.staleMs = between(1_900, 2_600);
    return entry;
  });
}

function simulate(settings: Settings3, entry: Case3) {
  const fail = (slotId: string, error: string) => ({ passed: false as const, slotId, error });
  if (settings.timeoutMs < entry.needMs)
    return fail('lookup', 'deadline exceeded waiting for the search index');
  if (entry.staleMs !== undefined && settings.timeoutMs > entry.staleMs)
    return fail('lookup', 'stale shard: results predate the last index refresh');
  if (settings.maxTokens < entry.needTokens)
    return fail('compose', 'incomplete answer: stop_reason max_tokens');
  if (entry.channelTokens !== undefined && settings.maxTokens > entry.channelTokens)
    return fail('compose', "answer exceeds the channel's message length limit");
  return { passed: true as const };
}

function settingsOf(slots: readonly Slot[]): Settings3 {
  const read = (slotId: string, key: string) =>
    Number(slots.find((slot) => slot.id === slotId)?.settings[key]);
  return { maxTokens: read('compose', 'maxTokens'), timeoutMs: read('lookup', 'timeoutMs') };
}

export const WORLD_3: SimWorld<Case3, Settings3> = {
  name: 'world 3 (token budget 4 × the base, not tuned to)',
  slots: SLOTS,
  base: BASE,
  generate,
  simulate,
  settingsOf,
};
