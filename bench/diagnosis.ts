/**
 * The diagnosis table of `npm run bench`: pipelines built with known injected faults, run through
 * heuristic-v1 and scored by code (fault found, unrelated changes, healthy changes, evidence flags).
 */
import type { SynthesisContext, SynthesisProposal } from '../lambdas/core/ports/synthesis.ts';
import type { Slot } from '../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../lambdas/core/schemas/records.ts';
import { synthesizeHeuristically } from '../lambdas/synthesis/heuristic/engine.ts';

/** A fault is found when this slot's setting moved this way ('changed' for text such as instructions). */
export interface ExpectedFix {
  slotId: string;
  setting: string;
  direction: 'up' | 'down' | 'changed';
}

/** One injected fault, answered by any of its fixes. */
export interface InjectedFault {
  name: string;
  fixes: ExpectedFix[];
}

export interface DiagnosisCase {
  name: string;
  faults: InjectedFault[];
  /** 'weak': thin or contradicted, must be flagged and low; 'strong': must not be; 'none': healthy. */
  evidence: 'strong' | 'weak' | 'none';
  context: SynthesisContext;
}

const SLOTS: Slot[] = [
  {
    id: 'system-prompt',
    name: 'System prompt',
    kind: 'prompt',
    settings: { instructions: 'Summarise tickets.' },
  },
  {
    id: 'generator',
    name: 'Generator',
    kind: 'model',
    settings: { model: 'model-large', temperature: 0.7, maxTokens: 1024, timeoutMs: 30_000, maxRetries: 1 },
  },
  {
    id: 'kb-search',
    name: 'KB search',
    kind: 'retrieval',
    settings: { index: 'kb', topK: 20, timeoutMs: 2_000 },
  },
  { id: 'formatter', name: 'Formatter', kind: 'tool', settings: { timeoutMs: 5_000 } },
];

type SignalSpec = Partial<Signal> & Pick<Signal, 'kind' | 'message'>;
interface SlotFault {
  slotId: string;
  /** Runs failing in the slot with this error, among the first runs. */
  failing?: number;
  error?: string;
  /** Duration of the slot in every run. */
  durationMs?: number;
}

let serial = 0;
const signals = (count: number, spec: SignalSpec): Signal[] =>
  Array.from({ length: count }, (_, index) => {
    serial += 1;
    return {
      id: `sig-${serial}`,
      pipelineId: 'bench',
      severity: 'warning',
      occurredAt: new Date(Date.UTC(2025, 5, 1, 12, 59 - index)).toISOString(),
      ...spec,
    };
  });

/** `count` runs, newest first, with the given faults injected into their slot results. */
function runs(count: number, faults: SlotFault[] = []): Execution[] {
  return Array.from({ length: count }, (_, index) => {
    const slotResults = SLOTS.map((slot) => {
      const fault = faults.find((candidate) => candidate.slotId === slot.id);
      const fails = fault?.failing !== undefined && index < fault.failing;
      return {
        slotId: slot.id,
        status: fails ? ('failed' as const) : ('succeeded' as const),
        durationMs: fault?.durationMs ?? 800,
        ...(fails ? { error: fault?.error ?? 'failed' } : {}),
      };
    });
    const failed = slotResults.some((result) => result.status === 'failed');
    serial += 1;
    return {
      id: `exec-${serial}`,
      pipelineId: 'bench',
      configurationId: 'config-bench',
      status: failed ? 'failed' : 'succeeded',
      durationMs: slotResults.reduce((sum, result) => sum + result.durationMs, 0),
      startedAt: new Date(Date.UTC(2025, 5, 1, 11, 59 - index)).toISOString(),
      slotResults,
    };
  });
}

const context = (signalList: Signal[], executions: Execution[]): SynthesisContext => ({
  pipeline: {
    id: 'bench',
    teamId: 'team',
    name: 'Bench pipeline',
    activeConfigurationId: 'config-bench',
    createdAt: '2025-06-01T00:00:00Z',
  },
  baseConfiguration: {
    id: 'config-bench',
    pipelineId: 'bench',
    version: 1,
    slots: structuredClone(SLOTS),
    source: 'manual',
    createdAt: '2025-06-01T00:00:00Z',
    createdBy: 'bench',
  },
  signals: signalList,
  executions,
});

const TIMEOUT: InjectedFault = {
  name: 'timeouts in generator',
  fixes: [{ slotId: 'generator', setting: 'timeoutMs', direction: 'up' }],
};
const RETRIEVAL_TIMEOUT: InjectedFault = {
  name: 'timeouts in kb-search',
  fixes: [{ slotId: 'kb-search', setting: 'timeoutMs', direction: 'up' }],
};
const MALFORMED: InjectedFault = {
  name: 'malformed output',
  fixes: [
    { slotId: 'generator', setting: 'temperature', direction: 'down' },
    { slotId: 'system-prompt', setting: 'instructions', direction: 'changed' },
  ],
};
const TRUNCATION: InjectedFault = {
  name: 'truncation',
  fixes: [{ slotId: 'generator', setting: 'maxTokens', direction: 'up' }],
};
const LATENCY: InjectedFault = {
  name: 'slow kb-search',
  fixes: [{ slotId: 'kb-search', setting: 'topK', direction: 'down' }],
};
const POOR_FEEDBACK: InjectedFault = {
  name: 'poor feedback',
  fixes: [{ slotId: 'system-prompt', setting: 'instructions', direction: 'changed' }],
};

const timeoutSignals = () =>
  signals(6, {
    kind: 'error',
    severity: 'critical',
    message: 'Model call timed out after 30000 ms',
    slotId: 'generator',
  });
const jsonSignals = (count = 6) =>
  signals(count, {
    kind: 'error',
    message: 'Output is not valid JSON: unexpected token',
    slotId: 'generator',
  });
const truncationSignals = (count = 5) =>
  signals(count, { kind: 'error', message: 'Answer cut off at max_tokens', slotId: 'generator' });
const feedbackSignals = () => [
  ...signals(4, { kind: 'feedback', message: 'User marked the answer unhelpful' }),
  ...signals(3, { kind: 'eval', severity: 'info', message: 'Faithfulness eval', value: 0.2 }),
];

/** The cases, built afresh on each call. */
export function diagnosisCases(): DiagnosisCase[] {
  serial = 0;
  return [
    {
      name: 'timeouts',
      faults: [TIMEOUT],
      evidence: 'strong',
      context: context(
        timeoutSignals(),
        runs(20, [{ slotId: 'generator', failing: 8, error: 'Timeout after 30000 ms' }]),
      ),
    },
    {
      name: 'retrieval timeouts (runs only)',
      faults: [RETRIEVAL_TIMEOUT],
      evidence: 'strong',
      context: context([], runs(20, [{ slotId: 'kb-search', failing: 6, error: 'ETIMEDOUT' }])),
    },
    {
      name: 'malformed output',
      faults: [MALFORMED],
      evidence: 'strong',
      context: context(
        jsonSignals(),
        runs(20, [{ slotId: 'generator', failing: 6, error: 'JSON parse error: unexpected token' }]),
      ),
    },
    {
      name: 'truncation',
      faults: [TRUNCATION],
      evidence: 'strong',
      context: context(
        truncationSignals(),
        runs(20, [{ slotId: 'generator', failing: 5, error: 'finish_reason length: output truncated' }]),
      ),
    },
    {
      name: 'latency',
      faults: [LATENCY],
      evidence: 'strong',
      context: context([], runs(20, [{ slotId: 'kb-search', durationMs: 26_000 }])),
    },
    {
      name: 'poor feedback',
      faults: [POOR_FEEDBACK],
      evidence: 'strong',
      context: context(feedbackSignals(), runs(20)),
    },
    {
      name: 'several at once',
      faults: [RETRIEVAL_TIMEOUT, TRUNCATION, POOR_FEEDBACK],
      evidence: 'strong',
      context: context(
        [...truncationSignals(), ...feedbackSignals()],
        runs(20, [
          { slotId: 'kb-search', failing: 6, error: 'Retrieval timed out' },
          { slotId: 'generator', failing: 4, error: 'stop_reason max_tokens: truncated' },
        ]),
      ),
    },
    {
      name: 'healthy',
      faults: [],
      evidence: 'none',
      context: context(
        [
          ...signals(3, { kind: 'deploy', severity: 'info', message: 'Configuration reloaded' }),
          ...signals(2, { kind: 'latency', severity: 'info', message: 'p90 latency', value: 900 }),
        ],
        runs(30),
      ),
    },
    {
      name: 'thin evidence',
      faults: [TRUNCATION],
      evidence: 'weak',
      context: context(truncationSignals(2), runs(4)),
    },
    {
      name: 'thin and contradicted',
      faults: [MALFORMED],
      evidence: 'weak',
      context: context(jsonSignals(2), runs(20)),
    },
    {
      name: 'contradicted evidence',
      faults: [MALFORMED],
      evidence: 'weak',
      context: context(jsonSignals(6), runs(20)),
    },
  ];
}

const EVIDENCE_WARNINGS = new Set(['thin_evidence', 'contradicted_evidence']);

export interface DiagnosisScore {
  name: string;
  faults: number;
  found: number;
  unrelatedChanges: number;
  /** Changes proposed for a healthy pipeline; 0 on every other case. */
  healthyChanges: number;
  confidence: string;
  evidenceWarnings: string[];
  /** Whether confidence and warnings match the evidence the case was built with. */
  evidenceOk: boolean;
}

function moved(before: unknown, after: unknown, direction: ExpectedFix['direction']): boolean {
  if (direction === 'changed') return after !== undefined && after !== before;
  if (typeof after !== 'number') return false;
  if (typeof before !== 'number') return direction === 'up';
  return direction === 'up' ? after > before : after < before;
}

/** Scores one proposal against the faults its case injected. */
export function scoreDiagnosis(testCase: DiagnosisCase, proposal: SynthesisProposal): DiagnosisScore {
  const base = new Map(testCase.context.baseConfiguration.slots.map((slot) => [slot.id, slot.settings]));
  const proposed = new Map(proposal.proposedSlots.map((slot) => [slot.id, slot.settings]));
  const fixed = (fix: ExpectedFix) =>
    moved(base.get(fix.slotId)?.[fix.setting], proposed.get(fix.slotId)?.[fix.setting], fix.direction);
  const found = testCase.faults.filter((fault) => fault.fixes.some(fixed)).length;
  const related = testCase.faults.flatMap((fault) => fault.fixes);
  const unrelatedChanges = proposal.changes.filter(
    (change) =>
      !Object.keys(change.patch).every((setting) =>
        related.some((fix) => fix.slotId === change.slotId && fix.setting === setting),
      ),
  ).length;
  const evidenceWarnings = [
    ...new Set(proposal.structuredWarnings.map((w) => w.type).filter((type) => EVIDENCE_WARNINGS.has(type))),
  ];
  const evidenceOk =
    testCase.evidence === 'weak'
      ? evidenceWarnings.length > 0 && proposal.confidence === 'low'
      : testCase.evidence === 'strong'
        ? evidenceWarnings.length === 0 && proposal.confidence !== 'low'
        : proposal.changes.length === 0;
  return {
    name: testCase.name,
    faults: testCase.faults.length,
    found,
    unrelatedChanges: testCase.evidence === 'none' ? 0 : unrelatedChanges,
    healthyChanges: testCase.evidence === 'none' ? proposal.changes.length : 0,
    confidence: proposal.confidence ?? 'none',
    evidenceWarnings,
    evidenceOk,
  };
}

/** Runs every case through heuristic-v1 and scores it. */
export function measureDiagnosis(): DiagnosisScore[] {
  return diagnosisCases().map((testCase) =>
    scoreDiagnosis(testCase, synthesizeHeuristically(testCase.context)),
  );
}

export interface DiagnosisTotals {
  faults: number;
  found: number;
  unrelatedChanges: number;
  healthyChanges: number;
  weakCases: number;
  weakFlagged: number;
  evidenceMismatches: number;
}

export function diagnosisTotals(
  scores: readonly DiagnosisScore[],
  cases = diagnosisCases(),
): DiagnosisTotals {
  const weak = new Set(cases.filter((c) => c.evidence === 'weak').map((c) => c.name));
  const sum = (pick: (score: DiagnosisScore) => number) => scores.reduce((total, s) => total + pick(s), 0);
  return {
    faults: sum((s) => s.faults),
    found: sum((s) => s.found),
    unrelatedChanges: sum((s) => s.unrelatedChanges),
    healthyChanges: sum((s) => s.healthyChanges),
    weakCases: weak.size,
    weakFlagged: scores.filter((s) => weak.has(s.name) && s.evidenceOk).length,
    evidenceMismatches: scores.filter((s) => !s.evidenceOk).length,
  };
}

/** The table and the verdict lines against the targets. */
export function formatDiagnosisTable(scores: readonly DiagnosisScore[]): string {
  const header = [
    'case',
    'faults found',
    'unrelated changes',
    'healthy changes',
    'confidence',
    'evidence warnings',
    'evidence ok',
  ];
  const rows = scores.map((s) => [
    s.name,
    `${s.found}/${s.faults}`,
    String(s.unrelatedChanges),
    String(s.healthyChanges),
    s.confidence,
    s.evidenceWarnings.join(', ') || '-',
    s.evidenceOk ? 'yes' : 'NO',
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ');
  const t = diagnosisTotals(scores);
  const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
  return [
    line(header),
    widths.map((width) => '-'.repeat(width)).join('-|-'),
    ...rows.map(line),
    '',
    `faults found ${t.found}/${t.faults} (target: all) ${verdict(t.found === t.faults)}`,
    `unrelated changes ${t.unrelatedChanges} (target: 0) ${verdict(t.unrelatedChanges === 0)}`,
    `changes on a healthy pipeline ${t.healthyChanges} (target: 0) ${verdict(t.healthyChanges === 0)}`,
    `thin or contradicted evidence flagged ${t.weakFlagged}/${t.weakCases} (target: all) ${verdict(t.weakFlagged === t.weakCases)}`,
    `confidence and warnings matching the evidence ${scores.length - t.evidenceMismatches}/${scores.length} ${verdict(t.evidenceMismatches === 0)}`,
  ].join('\n');
}
