/** The legacy plain-text explanation: findings with the runs they cite, then the changes. */
import { describe, expect, it } from 'vitest';
import { renderExplanation } from '../../../lambdas/core/explanation.ts';

describe('renderExplanation', () => {
  it('names the executions each finding cites, and counts them past five', () => {
    const text = renderExplanation(
      {
        summary: '2 findings.',
        findings: [
          {
            id: '1',
            description: 'Timeouts in slot "generator".',
            signalIds: [],
            executionIds: ['e8', 'e7', 'e6', 'e5', 'e4', 'e3', 'e2', 'e1'],
          },
          { id: '2', description: 'Slow retrieval.', signalIds: ['s1'], executionIds: ['e9'] },
          { id: '3', description: 'Bad feedback.', signalIds: ['s2'], executionIds: [] },
        ],
      },
      [],
    );

    expect(text.split('\n')).toEqual([
      '2 findings.',
      '',
      'Findings:',
      '1. Timeouts in slot "generator". (runs e8, e7, e6, e5, e4 and 3 more)',
      '2. Slow retrieval. (run e9)',
      '3. Bad feedback.',
    ]);
  });
});
