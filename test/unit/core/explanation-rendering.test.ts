/** The legacy plain-text explanation and warnings, as clients of the first API version read them. */
import { describe, expect, it } from 'vitest';
import { legacyWarnings, renderExplanation } from '../../../lambdas/core/explanation.ts';

const finding = (id: string, executionIds: string[]) => ({
  id,
  description: `Finding ${id}.`,
  signalIds: [],
  executionIds,
});

describe('the legacy explanation', () => {
  it('is the summary alone when there is nothing found and nothing to change', () => {
    expect(renderExplanation({ summary: 'All healthy.', findings: [] }, [])).toBe('All healthy.');
  });

  it('names exactly five cited runs without counting more', () => {
    const text = renderExplanation(
      { summary: 's', findings: [finding('1', ['e5', 'e4', 'e3', 'e2', 'e1'])] },
      [],
    );
    expect(text.split('\n')[3]).toBe('1. Finding 1. (runs e5, e4, e3, e2, e1)');
  });

  it('lists the changes after the findings, each with its slot, rationale and the findings it fixes', () => {
    const text = renderExplanation({ summary: '1 finding.', findings: [finding('1', [])] }, [
      {
        id: 'c1',
        slotId: 'generator',
        description: 'Raise the timeout to 60 s.',
        rationale: 'Half the runs time out.',
        findingIds: ['1', '2'],
        patch: { timeoutMs: 60_000 },
      },
      {
        id: 'c2',
        slotId: 'retriever',
        description: 'Retry once.',
        rationale: 'Transient errors.',
        findingIds: ['2'],
        patch: { maxRetries: 1 },
      },
    ]);
    expect(text.split('\n')).toEqual([
      '1 finding.',
      '',
      'Findings:',
      '1. Finding 1.',
      '',
      'Changes:',
      'c1. [generator] Raise the timeout to 60 s. — Half the runs time out. (fixes finding 1, 2)',
      'c2. [retriever] Retry once. — Transient errors. (fixes finding 2)',
    ]);
  });

  it('lists changes without a findings section when nothing was found', () => {
    const text = renderExplanation({ summary: 's', findings: [] }, [
      { id: 'c1', slotId: 'x', description: 'd', rationale: 'r', findingIds: [], patch: {} },
    ]);
    expect(text.split('\n')).toEqual(['s', '', 'Changes:', 'c1. [x] d — r (fixes finding )']);
  });
});

describe('the legacy warnings', () => {
  it('are the messages of the structured warnings, in order', () => {
    expect(
      legacyWarnings([
        { type: 'thin_evidence', message: 'Only 2 signals.', changeIds: ['c1'] },
        { type: 'redacted', message: 'A secret was removed.' },
      ]),
    ).toEqual(['Only 2 signals.', 'A secret was removed.']);
    expect(legacyWarnings([])).toEqual([]);
  });
});
