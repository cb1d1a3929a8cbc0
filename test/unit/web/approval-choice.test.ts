import { describe, expect, it } from 'vitest';
import {
  type ApproveForm,
  checkApproveForm,
  defaultChoice,
  describeApproval,
} from '../../../web/src/approval-choice.ts';
import type { Run } from '../../../web/src/types.ts';

const change = (id: string) => ({
  id,
  slotId: 's',
  description: `d${id}`,
  rationale: '',
  findingIds: [],
  patch: {},
});
/** Five changes, stored in slot order (as a run lists them), not by number. */
const run = {
  changes: ['2', '5', '1', '4', '3'].map(change),
  structuredWarnings: [] as Run['structuredWarnings'],
  evaluation: null,
} as unknown as Run;
const form = (over: Partial<ApproveForm> = {}): ApproveForm => ({
  chosen: new Set(['1', '2', '3', '4', '5']),
  rebase: false,
  rollout: false,
  percent: '10',
  minExecutions: '',
  autoPromote: false,
  ...over,
});

describe('the approve form', () => {
  it('sends exactly the changes ticked, in number order, and a rollout only when its box is ticked', () => {
    const partial = form({ chosen: new Set(['5', '1', '4']), rollout: true, percent: '10' });
    expect(checkApproveForm(run, partial)).toEqual({
      body: { changeIds: ['1', '4', '5'], rollout: { percent: 10 } },
      errors: {},
    });
    expect(checkApproveForm(run, form()).body).toEqual({});
    expect(
      checkApproveForm(
        run,
        form({ rebase: true, rollout: true, percent: '25 %', minExecutions: '500', autoPromote: true }),
      ).body,
    ).toEqual({
      rebase: true,
      rollout: { percent: 25, minExecutions: 500, autoPromote: true },
    });
  });

  it('makes a typo or an empty share an error on the field, never "all traffic at once"', () => {
    for (const percent of ['abc', '', '0', '100', '12.5', '-3']) {
      const checked = checkApproveForm(run, form({ rollout: true, percent }));
      expect(checked.body, percent).toBeNull();
      expect(checked.errors.percent, percent).toMatch(/whole percent from 1 to 99/);
    }
    expect(checkApproveForm(run, form({ rollout: true, minExecutions: '10' })).errors.minExecutions).toMatch(
      /from 30 to 100,000/,
    );
    expect(checkApproveForm(run, form({ chosen: new Set() })).errors.changes).toBe(
      'Choose at least one change to approve.',
    );
  });

  it('says what approving does, naming what goes live, for how much traffic, and what is left out', () => {
    expect(describeApproval(run, { changeIds: ['1', '4', '5'], rollout: { percent: 10 } })).toBe(
      'Changes 1, 4 and 5 go live for 10 % of traffic first (the other 90 % keeps the active configuration); 2 and 3 are left out. ' +
        "The candidate is rolled back automatically once its failure rate is shown worse than the base's; once it has 200 executions and its failure rate is shown within 1 percentage point of the base's, it can be promoted by hand.",
    );
    expect(describeApproval(run, {})).toBe(
      'All 5 changes (1, 2, 3, 4 and 5) go live for all traffic at once.',
    );
    expect(describeApproval(run, { changeIds: ['3'], override: { reason: 'r' } })).toBe(
      "Change 3 goes live for all traffic at once; 1, 2, 4 and 5 are left out. It is approved against the pipeline's approval rules; your reason is kept with the run.",
    );
  });

  it('leaves speculative, contradicted and breaking changes unticked to start with, saying why', () => {
    const doubtful = {
      ...run,
      structuredWarnings: [
        { type: 'speculative_change', message: 'a guess', changeIds: ['5'] },
        { type: 'contradicted_evidence', message: 'contradicted', changeIds: ['2'] },
        { type: 'thin_evidence', message: 'thin', changeIds: ['1'] },
      ],
      evaluation: {
        changes: [{ changeId: '3', evaluated: 40, fixed: [], fixedCount: 0, broken: [], brokenCount: 22 }],
      },
    } as unknown as Run;
    const { chosen, why } = defaultChoice(doubtful);
    expect([...chosen].sort()).toEqual(['1', '4']);
    expect(Object.fromEntries(why)).toEqual({
      '5': 'the synthesis calls it a guess',
      '2': 'recorded executions contradict the evidence it rests on',
      '3': 'replayed alone it broke 22 cases',
    });
  });
});
