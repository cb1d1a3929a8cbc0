/** heuristic-v1's engine: evidence of an earlier configuration superseded, and a refinement's cited cases. */
import { describe, expect, it } from 'vitest';
import type { SynthesisContext } from '../../../../lambdas/core/ports/synthesis.ts';
import type { Configuration, Slot } from '../../../../lambdas/core/schemas/pipelines.ts';
import type { Execution, Signal } from '../../../../lambdas/core/schemas/records.ts';
import { synthesizeHeuristically } from '../../../../lambdas/synthesis/heuristic/engine.ts';
import { context, signal, slot, slotRuns } from './fixtures.ts';

const gen = (settings: Slot['settings'] = {}) =>
  slot('gen', 'model', { timeoutMs: 30_000, temperature: 0.8, maxRetries: 1, ...settings });
const prompt = slot('prompt', 'prompt', { instructions: 'Be brief.' });

/** The base (version 1, active since 12:30) replaced a configuration whose model slot had `before`. */
const activated = (
  before: Slot['settings'],
  signals: Signal[],
  executions: Execution[],
  activeSince: string | null = '2025-03-01T12:30:00.000Z',
): SynthesisContext => {
  const base = context([gen(), prompt], signals, executions);
  const previousConfiguration: Configuration = {
    ...base.baseConfiguration,
    id: 'c-0',
    slots: [gen(before), prompt],
  };
  return { ...base, activeSince, previousConfiguration };
};
/** Runs of the model slot under the previous configuration; the first `failing` fail with `error`. */
const earlierRuns = (failing: number, error: string) =>
  slotRuns('gen', 10, failing, error).map((run) => ({ ...run, configurationId: 'c-0' }));
const timeouts = earlierRuns(4, 'timed out');
const earlierSignal = signal('s-early', { message: 'Model call timed out', slotId: 'gen' }, 10);
const freshSignal = signal('s-fresh', { message: 'Model call timed out', slotId: 'gen' }, 40);

const patches = (ctx: SynthesisContext) =>
  synthesizeHeuristically(ctx).changes.map((c) => [c.slotId, c.patch]);

describe('heuristic-v1 on evidence recorded before the last activation', () => {
  it('does not ask again for a setting the activation changed, and warns why', () => {
    const proposal = synthesizeHeuristically(activated({ timeoutMs: 15_000 }, [earlierSignal], timeouts));
    expect(proposal.changes).toEqual([]);
    expect(proposal.diagnosis.findings).toEqual([]);
    const superseded = proposal.structuredWarnings.filter((w) => w.type === 'superseded_evidence');
    expect(superseded).toEqual([
      {
        type: 'superseded_evidence',
        message: expect.stringMatching(
          /^Not proposed again: .+ All of it was recorded before version 1, active since 2025-03-01T12:30Z changed this setting; only new evidence on the active configuration can show it is still wrong\.$/,
        ),
      },
    ]);
  });

  it('asks again once a run of the active configuration or a newer signal shows the fault', () => {
    const onBase = timeouts.map((run, index) => (index === 0 ? { ...run, configurationId: 'c-1' } : run));
    expect(patches(activated({ timeoutMs: 15_000 }, [], onBase))).toEqual([['gen', { timeoutMs: 60_000 }]]);
    expect(patches(activated({ timeoutMs: 15_000 }, [earlierSignal, freshSignal], timeouts))).toEqual([
      ['gen', { timeoutMs: 60_000 }],
    ]);
  });

  it('asks again when the activation changed another setting, or its time is unknown', () => {
    expect(patches(activated({ maxRetries: 3 }, [earlierSignal], timeouts))).toEqual([
      ['gen', { timeoutMs: 60_000 }],
    ]);
    expect(patches(activated({ timeoutMs: 15_000 }, [], timeouts, null))).toEqual([
      ['gen', { timeoutMs: 60_000 }],
    ]);
  });

  it('counts a finding as superseded when any of its changes touches a setting the activation changed', () => {
    const malformed = earlierRuns(4, 'Invalid JSON output');
    expect(patches(activated({ maxRetries: 1 }, [], malformed)).map(([slotId]) => slotId)).toEqual([
      'gen',
      'prompt',
    ]);
    expect(patches(activated({ temperature: 0.9 }, [], malformed))).toEqual([]);
  });
});

describe('heuristic-v1 on a refinement run', () => {
  it('names the evaluation cases on the revised findings only', () => {
    const runs = slotRuns('gen', 10, 4, 'timed out');
    const change = {
      id: '1',
      slotId: 'gen',
      description: 'Raise timeoutMs',
      rationale: 'timeouts',
      findingIds: ['1'],
      patch: { timeoutMs: 60_000 },
    };
    const arms = (base: boolean, withChange: boolean) =>
      new Map([
        ['base', { passed: base }],
        ['candidate', { passed: withChange }],
        ['change:1', { passed: withChange }],
      ]);
    const refinement = {
      parentRunId: 'run-1',
      rootRunId: 'run-1',
      cases: runs.map((run) => ({ executionId: run.id, status: run.status })),
      trials: [
        {
          runId: 'run-1',
          changes: [change],
          results: new Map([
            ['gen-r0', arms(true, false)],
            ['gen-r5', arms(false, true)],
          ]),
        },
      ],
      heldOutCount: 0,
    };
    const proposal = synthesizeHeuristically({ ...context([gen(), prompt], [], runs), refinement });
    const [fresh, revised, ...rest] = proposal.diagnosis.findings;
    expect(rest).toEqual([]);
    expect(fresh && 'caseIds' in fresh).toBe(false);
    expect(revised?.caseIds).toEqual(['gen-r0']);
    expect(proposal.changes.map((c) => c.patch)).toEqual([{ timeoutMs: 45_000 }]);
  });
});
