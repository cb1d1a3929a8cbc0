import type { SynthesisContext, SynthesisEngine, SynthesisProposal } from '../core/ports.ts';
import type { Execution, Severity, Signal, Slot } from '../core/schemas.ts';
import { signalRepeatKey } from './confidence.ts';
import type { DraftChange, DraftFinding, DraftWarning, SynthesisDraft } from './draft.ts';
import { DRAFT_LIMITS, synthesisDraftSchema } from './draft.ts';
import { EXECUTION_IDS_PER_FINDING, finalizeProposal } from './finalize.ts';
import { newestFirst } from './history-summary.ts';
import { applyMergePatch, type JsonObject } from './merge-patch.ts';

/**
 * heuristic-v1: a deterministic, offline synthesis. It reads only the bounded windows of its
 * context (so its cost does not grow with history), recognises a few common faults, drafts a
 * diagnosis with numbered signal and run references exactly as a model would, and hands the draft to
 * finalizeProposal, which checks it the same way it checks a model's.
 */
export const HEURISTIC_V1_LIMITS = {
  shownSignals: 50,
  findings: 8,
  /** Run failures of one kind in one slot that make a finding without any signal… */
  minRunFailures: 2,
  /** …provided they are at least this share of the slot's runs. */
  minRunFailureRate: 0.1,
  /** A slot whose p90 duration is above this is slow; so is a latency signal with a higher value. */
  slowMs: 20_000,
  minLatencySamples: 5,
  /** Fewer signals and fewer runs than this in the window is thin evidence. */
  thinWindow: 3,
  timeoutCapMs: 600_000,
  minTimeoutMs: 30_000,
  defaultTimeoutMs: 60_000,
  retriesCap: 5,
  defaultRetries: 2,
  maxTokensCap: 32_768,
  defaultMaxTokens: 4_096,
  maxTokensFloorForLatency: 1_024,
  topKFloor: 3,
} as const;

const L = HEURISTIC_V1_LIMITS;

export const FORMAT_INSTRUCTION =
  'Respond only with valid JSON that matches the requested schema: no prose, no code fences, no trailing commas.';
export const QUALITY_INSTRUCTION =
  'Base every statement on the provided input; if the input does not support an answer, say so instead of guessing.';

type Fault = 'truncation' | 'timeout' | 'format' | 'transient' | 'latency' | 'quality' | 'error';

/** Checked in this order: the first match names the fault, so "timed out" is never an "error". */
const FAULT_PATTERNS: readonly [Fault, RegExp][] = [
  [
    'truncation',
    /truncat|max[ _-]?tokens|token limit|length limit|finish[ _-]?reason\W*length|stop[ _-]?reason\W*max|cut off/,
  ],
  ['timeout', /timed?[ _-]?out|timeout|deadline exceeded|etimedout/],
  [
    'format',
    /json|\bpars(e|er|ing)|schema|malformed|unexpected token|invalid (format|output|response)|\bformat/,
  ],
  [
    'transient',
    /rate[ _-]?limit|throttl|overload|\b(429|500|502|503|504|529)\b|unavailable|econnreset|econnrefused|connection (reset|refused|error)|socket hang up/,
  ],
  ['latency', /latenc|\bslow|\bp9[059]\b|response time|duration/],
  [
    'quality',
    /feedback|\beval|rating|score|quality|review|judge|hallucinat|incorrect|inaccurate|irrelevant|unhelpful|\bwrong\b|off[ -]topic|thumbs[ _-]?down/,
  ],
  ['error', /error|fail|exception|crash/],
];
const FAULT_ORDER: readonly Fault[] = FAULT_PATTERNS.map(([fault]) => fault);

const FAULT_LABELS: Record<Fault, string> = {
  truncation: 'Truncated output',
  timeout: 'Timeouts',
  format: 'Malformed output (format or parse errors)',
  transient: 'Transient upstream errors (rate limits, overload, dropped connections)',
  latency: 'High latency',
  quality: 'Poor answers (bad feedback or low eval scores)',
  error: 'Errors',
};

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

function classify(kind: string, message: string): Fault | undefined {
  const text = `${kind} ${message}`.toLowerCase();
  return FAULT_PATTERNS.find(([, pattern]) => pattern.test(text))?.[0];
}

/** Reads 0–1, 0–5, 0–10 and 0–100 scales; below half of the scale is a low score. */
function isLowScore(value: number): boolean {
  const scale = value <= 1 ? 1 : value <= 5 ? 5 : value <= 10 ? 10 : 100;
  return value / scale < 0.5;
}

/**
 * Info signals are context, not faults, unless their value says otherwise (a slow latency
 * reading, a low eval score); warning and critical signals of a recognised kind always count.
 */
function isFaultEvidence(signal: Signal, fault: Fault): boolean {
  if (signal.severity !== 'info') return true;
  if (signal.value === undefined) return false;
  if (fault === 'latency') return signal.value >= L.slowMs;
  if (fault === 'quality') return isLowScore(signal.value);
  return false;
}

const timeOf = (signal: Signal): number => Date.parse(signal.occurredAt);

/** Most severe first, then most recent, then by id, so equal inputs always sort the same. */
function compareForShowing(a: Signal, b: Signal): number {
  return (
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    timeOf(b) - timeOf(a) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** The signals a synthesis shows, numbered from 1: one per kind, slot and message, most severe then newest. */
export function selectShownSignals(signals: readonly Signal[], limit: number = L.shownSignals): Signal[] {
  const representative = new Map<string, Signal>();
  for (const signal of signals) {
    const key = signalRepeatKey(signal);
    const held = representative.get(key);
    if (held === undefined || compareForShowing(signal, held) < 0) representative.set(key, signal);
  }
  return [...representative.values()].sort(compareForShowing).slice(0, limit);
}

/** Nearest-rank percentile; `values` need not be sorted. */
function percentile(values: readonly number[], share: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)];
}

interface SlotRuns {
  runs: number;
  durations: number[];
  failures: Map<Fault, number>;
  /** The runs behind `failures`, per fault, and the runs behind `durations`, in the same order. */
  failedRuns: Map<Fault, Execution[]>;
  timedRuns: Execution[];
}

interface Evidence {
  fault: Fault;
  slot: Slot | undefined;
  signals: Signal[];
  runFailures: number;
  runs: number;
  p90Ms: number | undefined;
  latencySamples: number;
  /** The runs the finding cites: those that failed this way, or that were slow in its slot. */
  executions: Execution[];
}

const emptySlotRuns = (runs = 0): SlotRuns => ({
  runs,
  durations: [],
  failures: new Map(),
  failedRuns: new Map(),
  timedRuns: [],
});

const countFailure = (stats: SlotRuns, fault: Fault, execution: Execution): void => {
  stats.failures.set(fault, (stats.failures.get(fault) ?? 0) + 1);
  stats.failedRuns.set(fault, [...(stats.failedRuns.get(fault) ?? []), execution]);
};

/** Per slot: how often it ran, how long it took and how it failed; plus run failures naming no slot. */
function summarizeRuns(executions: readonly Execution[], slotsById: ReadonlyMap<string, Slot>) {
  const bySlot = new Map<string, SlotRuns>();
  const unattributed = emptySlotRuns(executions.length);
  for (const execution of executions) {
    let failedInSlot = false;
    for (const result of execution.slotResults ?? []) {
      if (!slotsById.has(result.slotId)) continue;
      const stats = bySlot.get(result.slotId) ?? emptySlotRuns();
      bySlot.set(result.slotId, stats);
      stats.runs += 1;
      stats.durations.push(result.durationMs);
      stats.timedRuns.push(execution);
      if (result.status === 'failed') {
        failedInSlot = true;
        countFailure(stats, classify('', result.error ?? '') ?? 'error', execution);
      }
    }
    if (execution.status === 'failed' && !failedInSlot) {
      countFailure(unattributed, classify('', execution.error ?? '') ?? 'error', execution);
    }
  }
  return { bySlot, unattributed };
}

/** Groups the window's evidence by fault and slot; every group returned is a finding. */
function gatherEvidence(context: SynthesisContext, slotsById: ReadonlyMap<string, Slot>) {
  const groups = new Map<string, Evidence>();
  const staleSlotIds = new Set<string>();
  const groupFor = (fault: Fault, slot: Slot | undefined): Evidence => {
    const key = `${fault}|${slot?.id ?? ''}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        fault,
        slot,
        signals: [],
        runFailures: 0,
        runs: 0,
        p90Ms: undefined,
        latencySamples: 0,
        executions: [],
      };
      groups.set(key, group);
    }
    return group;
  };

  for (const signal of context.signals) {
    const slot = signal.slotId === undefined ? undefined : slotsById.get(signal.slotId);
    if (signal.slotId !== undefined && slot === undefined) {
      // It names a slot this configuration no longer has: nothing here could fix it.
      staleSlotIds.add(signal.slotId);
      continue;
    }
    const fault =
      classify(signal.kind, signal.message) ?? (signal.severity === 'critical' ? 'error' : undefined);
    if (fault !== undefined && isFaultEvidence(signal, fault)) groupFor(fault, slot).signals.push(signal);
  }

  const runs = summarizeRuns(context.executions, slotsById);
  const attachRuns = (slot: Slot | undefined, stats: SlotRuns): void => {
    for (const fault of FAULT_ORDER) {
      const failures = stats.failures.get(fault) ?? 0;
      if (failures === 0) continue;
      const key = `${fault}|${slot?.id ?? ''}`;
      const concentrated = failures >= L.minRunFailures && failures / stats.runs >= L.minRunFailureRate;
      if (!groups.has(key) && !concentrated) continue;
      const group = groupFor(fault, slot);
      group.runFailures = failures;
      group.runs = stats.runs;
      group.executions = stats.failedRuns.get(fault) ?? [];
    }
  };
  for (const slot of context.baseConfiguration.slots) {
    const stats = runs.bySlot.get(slot.id);
    if (stats === undefined) continue;
    attachRuns(slot, stats);
    const p90Ms = percentile(stats.durations, 0.9);
    if (p90Ms === undefined || stats.durations.length < L.minLatencySamples) continue;
    if (p90Ms >= L.slowMs) groupFor('latency', slot);
    // The measured p90 sizes a new timeout and backs a latency finding, so both groups carry it.
    for (const fault of ['latency', 'timeout'] as const) {
      const group = groups.get(`${fault}|${slot.id}`);
      if (group === undefined) continue;
      group.p90Ms = p90Ms;
      group.latencySamples = stats.durations.length;
    }
    const latency = groups.get(`latency|${slot.id}`);
    if (latency !== undefined) {
      // A latency finding cites the runs that were slow in its slot.
      latency.executions = stats.timedRuns.filter((_, index) => (stats.durations[index] ?? 0) >= L.slowMs);
    }
  }
  attachRuns(undefined, runs.unattributed);

  const slotIndex = (slot: Slot | undefined): number =>
    slot === undefined ? Number.MAX_SAFE_INTEGER : context.baseConfiguration.slots.indexOf(slot);
  const rank = (group: Evidence): number =>
    Math.max(
      group.runFailures > 0 ? SEVERITY_RANK.warning : 0,
      ...group.signals.map((s) => SEVERITY_RANK[s.severity]),
    );
  const weight = (group: Evidence): number => group.signals.length + group.runFailures;
  const ordered = [...groups.values()].sort(
    (a, b) =>
      rank(b) - rank(a) ||
      weight(b) - weight(a) ||
      FAULT_ORDER.indexOf(a.fault) - FAULT_ORDER.indexOf(b.fault) ||
      slotIndex(a.slot) - slotIndex(b.slot),
  );
  return { ordered, staleSlotIds: [...staleSlotIds].sort() };
}

const plural = (count: number, one: string, many = `${one}s`): string =>
  `${count} ${count === 1 ? one : many}`;
const where = (slot: Slot | undefined): string =>
  slot === undefined ? 'with no slot named' : `in slot "${slot.id}" (${slot.kind})`;

function describeFinding(group: Evidence): string {
  const parts: string[] = [];
  if (group.signals.length > 0) parts.push(plural(group.signals.length, 'signal'));
  if (group.runFailures > 0) {
    const share = Math.round((group.runFailures / Math.max(1, group.runs)) * 100);
    parts.push(
      `${group.runFailures} of ${group.runs} recent runs failed ${group.slot === undefined ? '' : 'there '}this way (${share}%)`,
    );
  }
  if (group.p90Ms !== undefined)
    parts.push(`p90 duration ${group.p90Ms} ms over ${group.latencySamples} runs`);
  const readings = group.signals.flatMap((signal) => (signal.value === undefined ? [] : [signal.value]));
  if (group.fault === 'latency' && readings.length > 0)
    parts.push(`p90 reported latency ${percentile(readings, 0.9)}`);
  if (group.fault === 'quality' && readings.length > 0) {
    const mean = readings.reduce((sum, value) => sum + value, 0) / readings.length;
    parts.push(`mean score ${Math.round(mean * 100) / 100}`);
  }
  return `${FAULT_LABELS[group.fault]} ${where(group.slot)}: ${parts.join('; ')}.`;
}

interface Proposed {
  patch: JsonObject;
  description: string;
  rationale: string;
  /** Why the change is a guess, if it is one. */
  guess?: string;
}
interface Skipped {
  skip: string;
  conflict?: boolean;
}
interface Action {
  name: string;
  slot: Slot;
  /** Set when the evidence named no single fitting slot and this one was picked. */
  slotGuess?: string;
  build(settings: JsonObject): Proposed | Skipped;
}

const numberSetting = (settings: JsonObject, key: string): number | undefined => {
  const value = settings[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};
const hasKey = (slot: Slot, key: string): boolean => Object.hasOwn(slot.settings, key);

/**
 * The slot an action patches: the evidence's own slot when it fits, else the fitting slot
 * nearest to it in the configuration (a guess when there were several to choose from).
 */
function pickSlot(
  slots: readonly Slot[],
  evidenceSlot: Slot | undefined,
  fits: (slot: Slot) => boolean,
  kindLabel: string,
): { slot: Slot; slotGuess?: string } | undefined {
  if (evidenceSlot !== undefined && fits(evidenceSlot)) return { slot: evidenceSlot };
  const candidates = slots.filter(fits);
  const [first] = candidates;
  if (first === undefined) return undefined;
  if (candidates.length === 1) return { slot: first };
  const at = evidenceSlot === undefined ? 0 : slots.indexOf(evidenceSlot);
  const nearest = candidates.reduce((best, slot) =>
    Math.abs(slots.indexOf(slot) - at) < Math.abs(slots.indexOf(best) - at) ? slot : best,
  );
  return {
    slot: nearest,
    slotGuess: `the evidence names no single ${kindLabel} slot; "${nearest.id}" is the nearest of ${candidates.length}`,
  };
}

const raiseTimeout =
  (p90Ms: number | undefined) =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = numberSetting(settings, 'timeoutMs');
    if (current !== undefined && current >= L.timeoutCapMs) {
      // The limit cannot grow any more; retrying is what is left.
      const retried = raiseRetries('transient')(settings);
      return 'skip' in retried ? { skip: `timeoutMs is already ${current} and ${retried.skip}` } : retried;
    }
    if (current !== undefined) {
      const next = Math.min(L.timeoutCapMs, current * 2);
      return {
        patch: { timeoutMs: next },
        description: `Raise timeoutMs from ${current} to ${next}.`,
        rationale:
          'Calls hit their time limit; a longer limit lets slow but healthy calls finish instead of failing the run.',
      };
    }
    const next =
      p90Ms === undefined
        ? L.defaultTimeoutMs
        : Math.min(L.timeoutCapMs, Math.max(L.minTimeoutMs, Math.ceil((p90Ms * 2) / 1000) * 1000));
    return {
      patch: { timeoutMs: next },
      description: `Set timeoutMs to ${next} (it was not set).`,
      rationale: `Calls hit their time limit; an explicit limit of ${next} ms ${p90Ms === undefined ? 'is a starting point' : `is twice the p90 duration of ${p90Ms} ms`}.`,
      guess: `timeoutMs was not set, so the limit in force is unknown and ${next} ms may not be higher`,
    };
  };

const raiseRetries =
  (cause: 'transient' | 'error') =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = numberSetting(settings, 'maxRetries');
    if (current !== undefined && current >= L.retriesCap) {
      return { skip: `maxRetries is already ${current}, the most this heuristic sets` };
    }
    const next = current === undefined ? L.defaultRetries : current + 1;
    const rationale =
      cause === 'transient'
        ? 'The failures look transient (rate limits, overload, dropped connections or time limits); another retry recovers most of them.'
        : 'The slot fails often; another retry may recover intermittent failures.';
    const guesses = [
      cause === 'error'
        ? 'the errors do not show that they are transient, so retrying may not help'
        : undefined,
      current === undefined ? 'maxRetries was not set, so the retries in force are unknown' : undefined,
    ].filter((reason) => reason !== undefined);
    return {
      patch: { maxRetries: next },
      description:
        current === undefined
          ? `Set maxRetries to ${next} (it was not set).`
          : `Raise maxRetries from ${current} to ${next}.`,
      rationale,
      ...(guesses.length > 0 ? { guess: guesses.join('; ') } : {}),
    };
  };

const raiseMaxTokens = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'maxTokens');
  if (current !== undefined && current >= L.maxTokensCap) {
    return { skip: `maxTokens is already ${current}; shorter output must come from the prompt` };
  }
  if (current === undefined) {
    return {
      patch: { maxTokens: L.defaultMaxTokens },
      description: `Set maxTokens to ${L.defaultMaxTokens} (it was not set).`,
      rationale:
        'Output is cut off at the token limit; an explicit, larger budget lets complete answers through.',
      guess: 'maxTokens was not set, so the limit in force is unknown',
    };
  }
  const next = Math.min(L.maxTokensCap, current * 2);
  return {
    patch: { maxTokens: next },
    description: `Raise maxTokens from ${current} to ${next}.`,
    rationale: 'Output is cut off at the token limit; doubling the budget lets complete answers through.',
  };
};

const lowerTemperature = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'temperature');
  if (current === undefined) return { skip: 'temperature is not set, so lowering it is not a known change' };
  if (current === 0) return { skip: 'temperature is already 0' };
  const next = current >= 0.4 ? Math.round((current / 2) * 100) / 100 : 0;
  return {
    patch: { temperature: next },
    description: `Lower temperature from ${current} to ${next}.`,
    rationale:
      'Malformed output strays from the expected structure; a lower temperature makes it more predictable.',
  };
};

const appendInstruction =
  (sentence: string, rationale: string, guess?: string) =>
  (settings: JsonObject): Proposed | Skipped => {
    const current = typeof settings.instructions === 'string' ? settings.instructions : undefined;
    if (current?.includes(sentence)) return { skip: 'the instructions already say this' };
    const next =
      current === undefined || current.trim() === '' ? sentence : `${current.trimEnd()}\n\n${sentence}`;
    return {
      patch: { instructions: next },
      description: `Add to the instructions: "${sentence}"`,
      rationale,
      ...(guess === undefined ? {} : { guess }),
    };
  };

const LATENCY_GUESS = 'latency has many causes; this trades output length or recall for speed';

const lowerMaxTokens = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'maxTokens');
  if (current === undefined || current <= L.maxTokensFloorForLatency) {
    return { skip: `maxTokens is ${current ?? 'not set'}, too small or unknown to lower safely` };
  }
  const next = Math.max(L.maxTokensFloorForLatency, Math.round(current * 0.75));
  return {
    patch: { maxTokens: next },
    description: `Lower maxTokens from ${current} to ${next}.`,
    rationale: 'Long generations drive latency; a smaller token budget bounds the time per call.',
    guess: LATENCY_GUESS,
  };
};

const lowerTopK = (settings: JsonObject): Proposed | Skipped => {
  const current = numberSetting(settings, 'topK');
  if (current === undefined || current <= L.topKFloor * 2) {
    return { skip: `topK is ${current ?? 'not set'}, too small or unknown to lower safely` };
  }
  const next = Math.max(L.topKFloor, Math.ceil(current / 2));
  return {
    patch: { topK: next },
    description: `Lower topK from ${current} to ${next}.`,
    rationale: 'Fewer retrieved items mean less work per call and shorter prompts downstream.',
    guess: LATENCY_GUESS,
  };
};

const isModelLike = (key: string) => (slot: Slot) => slot.kind === 'model' || hasKey(slot, key);
const isPromptLike = (slot: Slot) => slot.kind === 'prompt' || hasKey(slot, 'instructions');
/** Timeouts and retries belong to whatever slot makes the call; a prompt slot does not, unless it says so. */
const canCall = (key: string) => (slot: Slot) => slot.kind !== 'prompt' || hasKey(slot, key);

function actionsFor(
  group: Evidence,
  slots: readonly Slot[],
  maxTokensRaisedOn: ReadonlySet<string>,
): Action[] {
  const actions: Action[] = [];
  const add = (
    name: string,
    target: { slot: Slot; slotGuess?: string } | undefined,
    build: Action['build'],
  ): void => {
    if (target !== undefined) actions.push({ name, ...target, build });
  };
  const callingSlot = (key: string) =>
    group.slot !== undefined && canCall(key)(group.slot)
      ? { slot: group.slot }
      : pickSlot(slots, group.slot, isModelLike(key), 'model');

  switch (group.fault) {
    case 'timeout':
      add('timeout', callingSlot('timeoutMs'), raiseTimeout(group.p90Ms));
      break;
    case 'transient':
      add('retries', callingSlot('maxRetries'), raiseRetries('transient'));
      break;
    case 'error':
      add('retries', callingSlot('maxRetries'), raiseRetries('error'));
      break;
    case 'truncation':
      add('raiseMaxTokens', pickSlot(slots, group.slot, isModelLike('maxTokens'), 'model'), raiseMaxTokens);
      break;
    case 'format':
      add('temperature', pickSlot(slots, group.slot, isModelLike('temperature'), 'model'), lowerTemperature);
      add(
        'formatInstruction',
        pickSlot(slots, group.slot, isPromptLike, 'prompt'),
        appendInstruction(
          FORMAT_INSTRUCTION,
          'An explicit instruction to return only valid JSON reduces malformed output.',
        ),
      );
      break;
    case 'latency': {
      if (group.slot !== undefined && hasKey(group.slot, 'topK')) {
        add('topK', { slot: group.slot }, lowerTopK);
        break;
      }
      const target = pickSlot(slots, group.slot, isModelLike('maxTokens'), 'model');
      if (target !== undefined && maxTokensRaisedOn.has(target.slot.id)) {
        actions.push({
          name: 'lowerMaxTokens',
          ...target,
          build: () => ({
            skip: `maxTokens of slot "${target.slot.id}" is being raised for truncated output, so it is not lowered for latency`,
            conflict: true,
          }),
        });
        break;
      }
      add('lowerMaxTokens', target, lowerMaxTokens);
      break;
    }
    case 'quality':
      add(
        'qualityInstruction',
        pickSlot(slots, group.slot, isPromptLike, 'prompt'),
        appendInstruction(
          QUALITY_INSTRUCTION,
          'Users or evals flag poor answers; a stricter instruction keeps the model to what the input supports.',
          'the signals say answers are poor, not why; a generic instruction may not address the cause',
        ),
      );
      break;
  }
  return actions;
}

const joinIds = (label: string, ids: readonly string[]): string =>
  `${label}${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;

/** Drafts heuristic-v1's diagnosis and changes, with the signals its references number. */
export function draftHeuristicSynthesis(context: SynthesisContext): {
  draft: SynthesisDraft;
  shownSignals: Signal[];
  shownExecutions: Execution[];
} {
  const slots = context.baseConfiguration.slots;
  const slotsById = new Map(slots.map((slot) => [slot.id, slot]));
  const shownSignals = selectShownSignals(context.signals);
  const refByKey = new Map(shownSignals.map((signal, index) => [signalRepeatKey(signal), index + 1]));
  const shownExecutions = newestFirst(context.executions);
  const refByExecution = new Map(shownExecutions.map((execution, index) => [execution, index + 1]));

  const { ordered, staleSlotIds } = gatherEvidence(context, slotsById);
  const groups = ordered.slice(0, L.findings);
  const findings: DraftFinding[] = groups.map((group, index) => ({
    id: String(index + 1),
    description: describeFinding(group),
    signalRefs: [
      ...new Set(group.signals.flatMap((signal) => refByKey.get(signalRepeatKey(signal)) ?? [])),
    ].sort((a, b) => a - b),
    // Refs follow the newest-first numbering, so the lowest refs are the most recent runs.
    executionRefs: [...new Set(group.executions.flatMap((execution) => refByExecution.get(execution) ?? []))]
      .sort((a, b) => a - b)
      .slice(0, EXECUTION_IDS_PER_FINDING),
  }));

  const maxTokensRaisedOn = new Set(
    groups.flatMap((group) =>
      group.fault === 'truncation'
        ? (pickSlot(slots, group.slot, isModelLike('maxTokens'), 'model')?.slot.id ?? [])
        : [],
    ),
  );

  const working = new Map<string, JsonObject>(slots.map((slot) => [slot.id, slot.settings]));
  const changes: DraftChange[] = [];
  const changeByAction = new Map<string, DraftChange>();
  const guesses: { changeId: string; reason: string }[] = [];
  const unaddressed: string[] = [];
  const conflicts: string[] = [];

  groups.forEach((group, index) => {
    const findingId = String(index + 1);
    const skipped: string[] = [];
    let addressed = false;
    for (const action of actionsFor(group, slots, maxTokensRaisedOn)) {
      const actionKey = `${action.name}|${action.slot.id}`;
      const existing = changeByAction.get(actionKey);
      if (existing !== undefined) {
        // Another finding already asked for this very change; citing it twice beats patching twice.
        if (!existing.findingIds.includes(findingId)) existing.findingIds.push(findingId);
        addressed = true;
        continue;
      }
      const settings = working.get(action.slot.id) ?? action.slot.settings;
      const result = action.build(settings);
      if ('skip' in result) {
        const reason = `slot "${action.slot.id}": ${result.skip}`;
        if (result.conflict === true) conflicts.push(`Finding ${findingId}: ${reason}.`);
        else skipped.push(reason);
        continue;
      }
      const change: DraftChange = {
        id: String(changes.length + 1),
        slotId: action.slot.id,
        description: `Slot "${action.slot.id}": ${result.description}`,
        rationale: result.rationale,
        findingIds: [findingId],
        patch: result.patch,
      };
      changes.push(change);
      changeByAction.set(actionKey, change);
      working.set(action.slot.id, applyMergePatch(settings, result.patch));
      const reasons = [action.slotGuess, result.guess].filter((reason) => reason !== undefined);
      if (reasons.length > 0) guesses.push({ changeId: change.id, reason: reasons.join('; ') });
      addressed = true;
    }
    if (!addressed) {
      unaddressed.push(
        `Finding ${findingId}: ${skipped.length > 0 ? skipped.join('; ') : 'no slot of this configuration can take a fix for it'}.`,
      );
    }
  });

  const warnings: DraftWarning[] = [];
  if (context.signals.length < L.thinWindow && context.executions.length < L.thinWindow) {
    warnings.push({
      type: 'thin_evidence',
      message: `Only ${plural(context.signals.length, 'signal')} and ${plural(context.executions.length, 'run')} in the window; the diagnosis rests on little evidence.`,
    });
  }
  // Findings on thin or contradicted evidence are flagged by finalizeProposal, for every handler alike.
  const speculativeAt = warnings.length;
  if (conflicts.length > 0) {
    warnings.push({
      type: 'conflicting_evidence',
      message: conflicts.join(' ').slice(0, DRAFT_LIMITS.textLength),
    });
  }
  if (unaddressed.length > 0) {
    warnings.push({
      type: 'no_applicable_change',
      message:
        `No safe change addresses ${unaddressed.length === 1 ? 'this finding' : 'these findings'}. ${unaddressed.join(' ')}`.slice(
          0,
          DRAFT_LIMITS.textLength,
        ),
    });
  }
  if (ordered.length > groups.length) {
    warnings.push({
      type: 'findings_truncated',
      message: `${plural(ordered.length - groups.length, 'weaker finding was', 'weaker findings were')} left out; only the ${groups.length} strongest are reported.`,
    });
  }
  if (staleSlotIds.length > 0) {
    const named = staleSlotIds.slice(0, 5).map((id) => `"${id}"`);
    if (staleSlotIds.length > named.length) named.push(`${staleSlotIds.length - named.length} more`);
    warnings.push({
      type: 'stale_signals',
      message: `Signals name ${staleSlotIds.length === 1 ? 'a slot' : 'slots'} the base configuration does not have (${named.join(', ')}); they were not used.`,
    });
  }

  const evidence = `${plural(context.signals.length, 'signal')} and ${plural(context.executions.length, 'recent run')}`;
  let summary: string;
  if (groups.length === 0) {
    summary = `No fault found in ${evidence}; no changes proposed.`;
    warnings.push({
      type: 'no_changes',
      message: `Nothing to fix: none of the ${evidence} shows a fault this heuristic recognises.`,
    });
  } else {
    const found = groups
      .map((group) => `${FAULT_LABELS[group.fault].toLowerCase()} ${where(group.slot)}`)
      .join('; ');
    const outcome =
      changes.length === 0
        ? 'No changes proposed: no setting this heuristic changes safely addresses them.'
        : `${plural(changes.length, 'change')} proposed.`;
    summary = `${plural(groups.length, 'finding')} from ${evidence}: ${found}. ${outcome}`;
    if (changes.length === 0) {
      warnings.push({
        type: 'no_changes',
        message: 'The findings stand, but no setting this heuristic changes safely addresses them.',
      });
    }
  }

  // One warning per guessed change reads best; a draft holds only so many, so past that they merge.
  const perChange: DraftWarning[] = guesses.map(({ changeId, reason }) => ({
    type: 'speculative_change',
    message: `Change ${changeId} is a guess: ${reason}.`,
    changeIds: [changeId],
  }));
  const merged: DraftWarning[] =
    guesses.length === 0
      ? []
      : [
          {
            type: 'speculative_change',
            message: `${joinIds(
              'Change',
              guesses.map(({ changeId }) => changeId),
            )} are guesses; see their rationale.`,
            changeIds: guesses.map(({ changeId }) => changeId),
          },
        ];
  warnings.splice(
    speculativeAt,
    0,
    ...(warnings.length + perChange.length <= DRAFT_LIMITS.warnings ? perChange : merged),
  );

  // Parsing our own draft keeps heuristic-v1 honest to the schema a model is held to.
  const draft = synthesisDraftSchema.parse({
    diagnosis: { summary: summary.slice(0, DRAFT_LIMITS.summaryLength), findings },
    changes,
    warnings,
  });
  return { draft, shownSignals, shownExecutions };
}

/** Runs heuristic-v1 on a context: draft, then the shared checks of finalizeProposal. */
export function synthesizeHeuristically(context: SynthesisContext): SynthesisProposal {
  const { draft, shownSignals, shownExecutions } = draftHeuristicSynthesis(context);
  return finalizeProposal(draft, {
    shownSignals,
    shownExecutions,
    baseConfiguration: context.baseConfiguration,
    allSignalsInWindow: context.signals,
  });
}

/** The offline, deterministic synthesis engine. */
export const heuristicV1: SynthesisEngine = {
  name: 'heuristic-v1',
  async generate(context: SynthesisContext): Promise<SynthesisProposal> {
    return synthesizeHeuristically(context);
  },
};
