/*
 * A pipeline's series over time: per-minute and per-hour counters, kept with the recording
 * (store/series-writes.ts). What a batch of executions or signals adds to each bucket (ADD deltas under short attribute
 * names), and how the counters read back become a bucket of the answer: exact counts and means,
 * percentiles from a mergeable log-spaced histogram (relative error ≤ 2 %).
 */
import type { Execution, Signal } from './schemas/records.ts';

/** The relative error of a histogram's quantile (a little under 2 %, for floating point). */
export const HISTOGRAM_ERROR = 0.0195;
const GAMMA = (1 + HISTOGRAM_ERROR) / (1 - HISTOGRAM_ERROR);
const LOG_GAMMA = Math.log(GAMMA);

/**
 * A duration's histogram bin: `dz` below 1 ms, else `d<k>` with k = ⌈log_γ(x)⌉, so every value of
 * bin k lies in (γ^(k-1), γ^k] and the bin's estimate 2γ^k/(γ+1) is within HISTOGRAM_ERROR of
 * each of them (DDSketch, Masson et al. 2019). 24 h at most: about 430 bins.
 */
export function durationBin(durationMs: number): string {
  if (!(durationMs >= 1)) return 'dz';
  return `d${Math.max(0, Math.ceil(Math.log(durationMs) / LOG_GAMMA - 1e-9))}`;
}

/** The estimate of a bin's values. */
export function binValue(bin: string): number {
  if (bin === 'dz') return 0;
  const k = Number(bin.slice(1));
  return (2 * GAMMA ** k) / (GAMMA + 1);
}

/** The nearest-rank quantile q (0–1) of a histogram (bin → count); null when it is empty. */
export function histogramQuantile(bins: Map<string, number>, q: number): number | null {
  const sorted = [...bins].filter(([, n]) => n > 0).sort(([a], [b]) => binOrder(a) - binOrder(b));
  const total = sorted.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bin, n] of sorted) {
    seen += n;
    if (seen >= rank) return binValue(bin);
  }
  return binValue(sorted.at(-1)?.[0] ?? 'dz');
}

const binOrder = (bin: string) => (bin === 'dz' ? -1 : Number(bin.slice(1)));

export type Step = 'minute' | 'hour' | 'day';
export const STEP_MS: Record<Step, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The start of the bucket holding `time` (UTC), as an ISO time. */
export function bucketStart(time: string | number, step: Step): string {
  const ms = typeof time === 'number' ? time : Date.parse(time);
  return new Date(Math.floor(ms / STEP_MS[step]) * STEP_MS[step]).toISOString();
}

/** The grains kept: minutes (answers by the minute) and hours (answers by the hour and day). */
export const KEPT_GRAINS = ['minute', 'hour'] as const;
export type Grain = (typeof KEPT_GRAINS)[number];

/** A bucket's counters to add: bucket (grain, start, configuration or null: every one) → attribute → by. */
export interface SeriesDelta {
  grain: Grain;
  at: string;
  configurationId: string | null;
  adds: Map<string, number>;
}

function deltaFor(
  into: Map<string, SeriesDelta>,
  grain: Grain,
  at: string,
  configurationId: string | null,
): Map<string, number> {
  const key = `${grain}|${at}|${configurationId ?? ''}`;
  let delta = into.get(key);
  if (!delta) {
    delta = { grain, at, configurationId, adds: new Map() };
    into.set(key, delta);
  }
  return delta.adds;
}

const add = (adds: Map<string, number>, name: string, by: number) => {
  if (by !== 0) adds.set(name, (adds.get(name) ?? 0) + by);
};

/**
 * What executions add: `n` executions, `f` failed, `ds` duration sum, `ti`/`to` tokens, one
 * histogram bin; to their configuration's bucket, by the minute and the hour of `startedAt`. The
 * whole pipeline's executions are its configurations' added up when read (every execution names
 * its configuration): one item a bucket fewer to update with each transaction of records.
 */
export function executionDeltas(executions: Execution[]): SeriesDelta[] {
  const into = new Map<string, SeriesDelta>();
  for (const execution of executions) {
    let input = 0;
    let output = 0;
    for (const slot of execution.slotResults ?? []) {
      input += slot.inputTokens ?? 0;
      output += slot.outputTokens ?? 0;
    }
    for (const grain of KEPT_GRAINS) {
      const adds = deltaFor(into, grain, bucketStart(execution.startedAt, grain), execution.configurationId);
      add(adds, 'n', 1);
      add(adds, 'f', execution.status === 'failed' ? 1 : 0);
      add(adds, 'ds', execution.durationMs);
      add(adds, 'ti', input);
      add(adds, 'to', output);
      add(adds, durationBin(execution.durationMs), 1);
    }
  }
  return [...into.values()];
}

/**
 * What signals add: `v.<severity>` a count, and for a signal with a value `k.<kind>.n|s` (its
 * kind's count and sum); by the minute and hour of `occurredAt`, to the pipeline's bucket only
 * (a signal names no configuration).
 */
export function signalDeltas(signals: Signal[]): SeriesDelta[] {
  const into = new Map<string, SeriesDelta>();
  for (const signal of signals) {
    for (const grain of KEPT_GRAINS) {
      const adds = deltaFor(into, grain, bucketStart(signal.occurredAt, grain), null);
      add(adds, `v.${signal.severity}`, 1);
      if (signal.value !== undefined) {
        add(adds, `k.${signal.kind}.n`, 1);
        add(adds, `k.${signal.kind}.s`, signal.value);
      }
    }
  }
  return [...into.values()];
}

/** A bucket as the API answers it (the metrics answer's shape). */
export interface Bucket {
  at: string;
  executions: number;
  failed: number;
  failureRate: number | null;
  durationMs: { mean: number | null; p50: number | null; p95: number | null; p99: number | null };
  tokens: { input: number; output: number };
  signals: { info: number; warning: number; critical: number };
  scores: Record<string, { count: number; mean: number | null }>;
}

/** Counters of one bucket, merged from its items (shards, or the hours of a day). */
export type Counters = Map<string, number>;

const FIXED_COUNTERS = new Set(['n', 'f', 'ds', 'ti', 'to', 'dz']);

/** A histogram bin's index (dz: -1), or null for another name. */
function binIndex(name: string): number | null {
  if (name === 'dz') return -1;
  if (name.charCodeAt(0) !== 100 /* d */ || name.length < 2) return null;
  // The digits read in place: a day of minute buckets reads this for every bin of every bucket.
  let index = 0;
  for (let i = 1; i < name.length; i++) {
    const digit = name.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    index = index * 10 + digit;
  }
  return index;
}

/** Whether an attribute is a counter (`n`, `f`, `ds`, `ti`, `to`, `d…`, `v.…`, `k.…`): cheap, read per item. */
function isCounter(name: string): boolean {
  if (FIXED_COUNTERS.has(name)) return true;
  if (name.charCodeAt(1) === 46 /* . */) {
    const first = name.charCodeAt(0);
    return (first === 118 /* v */ || first === 107) /* k */ && name.length > 2;
  }
  return binIndex(name) !== null;
}

/** Adds counters already merged (another shard's, an hour of a day, a minute of a window) into `into`. */
export function addCounters(into: Counters, from: Iterable<[string, number]>): void {
  for (const [name, value] of from) into.set(name, (into.get(name) ?? 0) + value);
}

/** Whether a counter is the executions' (`n`, `f`, `ds`, `ti`, `to`, `d…`), not the signals' (`v.…`, `k.…`). */
const isExecutionCounter = (name: string) => FIXED_COUNTERS.has(name) || binIndex(name) !== null;

/**
 * Adds an item's counters into `into` (the attributes `n`, `f`, `ds`, `ti`, `to`, `d…`, `v.…`,
 * `k.…`), or only the executions' or the signals' (`only`).
 */
export function mergeCounters(
  into: Counters,
  item: Record<string, unknown>,
  only?: 'executions' | 'signals',
): void {
  for (const name in item) {
    const value = item[name];
    if (typeof value !== 'number' || !isCounter(name)) continue;
    if (only !== undefined && isExecutionCounter(name) !== (only === 'executions')) continue;
    into.set(name, (into.get(name) ?? 0) + value);
  }
}

const round = (value: number, digits = 6) => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

/** Each bin's estimate as an answer gives it (to the microsecond), computed once a bin. */
const binValues: number[] = [];
function roundedBinValue(index: number): number {
  let value = binValues[index];
  if (value === undefined) {
    value = round((2 * GAMMA ** index) / (GAMMA + 1), 3);
    if (index < 4_096) binValues[index] = value;
  }
  return value;
}

/** The nearest-rank quantiles `qs` (ascending) of sorted bins [index, count], in one pass. */
function quantilesOf(
  bins: Array<[number, number]>,
  total: number,
  qs: readonly number[],
): Array<number | null> {
  if (total === 0) return qs.map(() => null);
  const values: Array<number | null> = [];
  let seen = 0;
  let at = 0;
  for (const q of qs) {
    const rank = Math.max(1, Math.ceil(q * total));
    while (at < bins.length && seen + (bins[at] as [number, number])[1] < rank) {
      seen += (bins[at] as [number, number])[1];
      at++;
    }
    const bin = bins[Math.min(at, bins.length - 1)] as [number, number];
    values.push(bin[0] < 0 ? 0 : roundedBinValue(bin[0]));
  }
  return values;
}

const QUANTILES = [0.5, 0.95, 0.99] as const;

/** The answer's bucket from its merged counters (an empty bucket is zeros). */
export function bucketOf(at: string, counters: Counters | undefined): Bucket {
  const get = (name: string) => counters?.get(name) ?? 0;
  const executions = get('n');
  const failed = get('f');
  const bins: Array<[number, number]> = [];
  let binned = 0;
  const scores: Bucket['scores'] = {};
  for (const [name, value] of counters ?? []) {
    const index = binIndex(name);
    if (index !== null) {
      if (value > 0) {
        bins.push([index, value]);
        binned += value;
      }
      continue;
    }
    if (name.startsWith('k.') && name.endsWith('.n') && value > 0) {
      const kind = name.slice(2, -2);
      scores[kind] = { count: value, mean: round(get(`k.${kind}.s`) / value) };
    }
  }
  bins.sort((a, b) => a[0] - b[0]);
  const [p50, p95, p99] = quantilesOf(bins, binned, QUANTILES);
  return {
    at,
    executions,
    failed,
    failureRate: executions > 0 ? round(failed / executions) : null,
    durationMs: {
      mean: executions > 0 ? round(get('ds') / executions, 3) : null,
      p50: p50 ?? null,
      p95: p95 ?? null,
      p99: p99 ?? null,
    },
    tokens: { input: get('ti'), output: get('to') },
    signals: { info: get('v.info'), warning: get('v.warning'), critical: get('v.critical') },
    scores,
  };
}

/**
 * An hour's counters as the export writes them (one line per shard item: add them up by `at` and
 * `configurationId`): counts and sums, and the duration histogram as each bin's upper bound (ms)
 * → count, from which any percentile is read within 2 %. The executions are on their
 * configuration's lines, the signals on the lines without one (an item written before kept a copy
 * of the executions there too: left out, so that adding every line counts each once).
 */
export function exportedCounters(item: unknown) {
  const record = item as Record<string, unknown>;
  const [at, tag, configurationId] = String(record.sk).split('#');
  const counters: Counters = new Map();
  mergeCounters(counters, record, tag === 'A' ? 'signals' : undefined);
  const get = (name: string) => counters.get(name) ?? 0;
  const histogram: Record<string, number> = {};
  const scores: Record<string, { count: number; sum: number }> = {};
  for (const [name, value] of counters) {
    if (name === 'dz' || /^d\d+$/.test(name)) {
      const upper = name === 'dz' ? 1 : round(GAMMA ** Number(name.slice(1)), 3);
      histogram[String(upper)] = value;
    }
    const kind = /^k\.(.+)\.n$/.exec(name)?.[1];
    if (kind !== undefined) scores[kind] = { count: value, sum: get(`k.${kind}.s`) };
  }
  return {
    at,
    ...(tag === 'C' && configurationId ? { configurationId } : {}),
    executions: get('n'),
    failed: get('f'),
    durationMsSum: get('ds'),
    durationMsHistogram: histogram,
    tokens: { input: get('ti'), output: get('to') },
    signals: { info: get('v.info'), warning: get('v.warning'), critical: get('v.critical') },
    scores,
  };
}
