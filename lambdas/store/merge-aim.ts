/*
 * Where a merged read's next round aims (store/shards.ts): from the times of the items read so far,
 * the time down to which each source is read next, so that the round reads about what is missing
 * and, for a frugal read, rarely more (docs/scaling.md, "Merged reads").
 */
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export type Item = Record<string, unknown>;

/** How likely a frugal round may be to find more items than are missing (frugalAim). */
const FRUGAL_RISK = 0.02;

/**
 * One source of a merged read: its Query without the key condition, its partition's condition and
 * the sort key's bounds (`from`/`to` inclusive, `after` exclusive, in key order whatever the read's).
 * Sort keys start with an ISO time (`<time>#<id>`), which the estimates below read.
 */
export interface RangeQuery {
  base: Omit<QueryCommandInput, 'KeyConditionExpression'>;
  /** The partition's condition, e.g. `pk = :pk` (its values in base.ExpressionAttributeValues). */
  partition: string;
  from?: string;
  after?: string;
  to?: string;
}

export interface Source {
  query: RangeQuery;
  items: Item[];
  /** Everything of this source before `last` (in the read's order) is read. */
  last: string | null;
  /** LastEvaluatedKey, when the last page stopped at its Limit (else `last` is a bare time). */
  start: Item | undefined;
  /** Read to the end of its range: every item of it is read. */
  exhausted: boolean;
}

/** A round's page of one source: at most `share` items, down to `until` (a key or bare time) if given. */
export interface Page {
  share: number;
  until: string | null;
  /** `until` is an estimate: reaching it does not end the source. */
  estimated: boolean;
}

/** P(a Poisson count of this mean exceeds `missing`), its terms summed in log space (no underflow). */
export function poissonAbove(mean: number, missing: number): number {
  let logTerm = -mean;
  let atMost = Math.exp(logTerm);
  for (let k = 1; k <= missing; k++) {
    logTerm += Math.log(mean / k);
    atMost += Math.exp(logTerm);
  }
  return 1 - atMost;
}

/**
 * The share of the `missing` items a frugal round aims at: the most whose round finds more than
 * are missing (an item read past the answer) with a chance of at most FRUGAL_RISK, were the items
 * strewn at random in time (Poisson), and at most 80 % of them.
 */
export function frugalAim(missing: number): number {
  const above = (mean: number) => poissonAbove(mean, missing);
  let low = 0;
  let high = 0.8 * missing;
  if (above(high) <= FRUGAL_RISK) return high;
  for (let step = 0; step < 30; step++) {
    const middle = (low + high) / 2;
    if (above(middle) <= FRUGAL_RISK) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * How much further a frugal round aims after `stalls` rounds in a row found nothing (a gap in the
 * history): 1.3 times a round after two, so that the round crossing the gap's end finds little past
 * it; twice a round after twelve (an idle night, hundreds of times the records' spacing, is
 * crossed within the rounds, at the cost of the items past its end).
 */
function gapGrowth(stalls: number): number {
  if (stalls <= 2) return 1;
  if (stalls <= 12) return 1.3 ** (stalls - 2);
  return 1.3 ** 10 * 2 ** (stalls - 12);
}

export const YEAR_0 = Date.parse('0000-01-01T00:00:00.000Z');
const YEAR_9999 = Date.parse('9999-12-31T23:59:59.999Z');

/** The time a sort key starts with, in ms (NaN when it does not start with an ISO time). */
export const timeOf = (key: string) => Date.parse(key.slice(0, 24));

/**
 * Before the answer is complete: the time down to which the items read and those expected (the
 * rate the sources were read at so far; the ids' hash spreads the records evenly over them) make
 * the answer, aimed at `aim` of what is missing, and each open source's page down to it. Keys
 * without a time, or a round that found nothing: an even share each, to the sources' ends.
 */
export function estimatedPages(
  open: Source[],
  keys: string[],
  complete: number,
  {
    limit,
    ascending,
    stalls,
    aim,
    frugal,
  }: { limit: number; ascending: boolean; stalls: number; aim: number; frugal: boolean },
): Map<Source, Page> {
  const missing = limit - complete;
  const even = (): Map<Source, Page> =>
    new Map(
      open.map((source) => [
        source,
        { share: Math.max(1, Math.ceil(missing / open.length)), until: null, estimated: false },
      ]),
    );
  const times = keys.map(timeOf);
  const lasts = open.map((source) => timeOf(source.last ?? ''));
  // Twice in a row nothing up to the estimate (a gap in the history): the sources are read to their
  // ends. A frugal read goes on aiming, further each round (gapGrowth).
  if ((stalls > 1 && !frugal) || times.length === 0 || [...times, ...lasts].some(Number.isNaN)) return even();
  // Where the read started (the newest or oldest time read), and each source's distance from it.
  const origin = ascending ? Math.min(...times) : Math.max(...times);
  const spans = lasts.map((last) => Math.max(1, Math.abs(origin - last)));
  const rate =
    open.reduce((sum, source) => sum + source.items.length, 0) / spans.reduce((sum, span) => sum + span, 0);
  if (!(rate > 0)) return even();
  const beyond = (a: number, b: number) => (ascending ? a > b : a < b);
  // Items read before the time `at`, and those expected from every open source between its last key and it.
  const count = (at: number) =>
    times.reduce((sum, time) => sum + (beyond(time, at) ? 0 : 1), 0) +
    lasts.reduce((sum, last) => sum + rate * Math.max(0, ascending ? at - last : last - at), 0);
  // Aimed short of the answer's end: items read past it are read for nothing, while a round short
  // of it costs only one more round (the last few items are aimed at whole).
  // Once nothing was found up to the estimate (the last few items are often just past it, by
  // chance), aimed four times as far rather than an even share of every source: 33 sources asked
  // for one item each read 33 for the one or two missing.
  // A frugal round also leaves room for the rate's own error: estimated from the n items read so
  // far, it is off by about 1/√n.
  const target = frugal
    ? complete + (frugalAim(missing) / (1 + 1.5 / Math.sqrt(keys.length))) * gapGrowth(stalls)
    : complete + (missing > 2 ? missing * aim : missing) * (stalls === 1 ? 4 : 1);
  const direction = ascending ? 1 : -1;
  let near = ascending ? Math.min(...lasts) : Math.max(...lasts);
  let step = missing / rate / open.length + 1;
  let far = near + direction * step;
  for (let grow = 0; grow < 60 && count(far) < target; grow++) {
    near = far;
    step *= 2;
    far = near + direction * step;
  }
  for (let halve = 0; halve < 40; halve++) {
    const middle = (near + far) / 2;
    if (count(middle) < target) near = middle;
    else far = middle;
  }
  // A whole millisecond past `far` in the read's direction: a source stopped at its Limit among
  // records sharing one millisecond goes on from a key inside it (`<ms>#<id>`), so a bound rounded
  // back to that millisecond would lie behind its start key, which DynamoDB refuses. Within
  // four-digit years: a time outside them does not sort among ISO keys (`+010000-…` < `2026-…`).
  const bound = Math.min(Math.max(ascending ? Math.ceil(far) : Math.floor(far), YEAR_0), YEAR_9999);
  const until = new Date(bound).toISOString();
  const pages = new Map<Source, Page>();
  open.forEach((source, index) => {
    const last = lasts[index] as number;
    const share = Math.ceil(rate * Math.abs(far - last) * 2) + 2;
    // Strictly past the millisecond of the source's position, so past its start key too.
    if (beyond(bound, last)) pages.set(source, { share, until, estimated: true });
  });
  return pages.size > 0 ? pages : even();
}
