/** The synthesis handler names a run may ask for. */
import { describe, expect, it } from 'vitest';
import { isSynthesisHandlerName, SYNTHESIS_HANDLER_NAMES } from '../../../lambdas/core/synthesis-handlers.ts';

describe('synthesis handler names', () => {
  it('are heuristic-v1 and claude-v1, and nothing else, in any spelling', () => {
    expect(SYNTHESIS_HANDLER_NAMES.filter(isSynthesisHandlerName)).toEqual(['heuristic-v1', 'claude-v1']);
    for (const name of ['', 'claude', 'Claude-v1', 'heuristic-v2', ' heuristic-v1', 'toString'])
      expect(isSynthesisHandlerName(name)).toBe(false);
  });
});
