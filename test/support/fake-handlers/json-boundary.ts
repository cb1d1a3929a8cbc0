/**
 * Reports how its event arrived and returns values JSON would change (`returns: 'odd'`), cannot
 * write (`'cycle'`), or nothing at all (`'nothing'`): what crosses the Lambda boundary is JSON.
 */
export const handler = async (event: { when?: unknown; returns?: string } & Record<string, unknown>) => {
  const seen = { when: typeof event.when, hasMissing: 'missing' in event };
  if (event.returns === 'nothing') return undefined;
  if (event.returns === 'cycle') {
    const cycle: Record<string, unknown> = { seen };
    cycle.self = cycle;
    return cycle;
  }
  return {
    seen,
    date: new Date(0),
    missing: undefined,
    nan: Number.NaN,
    negativeZero: -0,
    map: new Map([['a', 1]]),
    custom: { toJSON: () => 'custom' },
  };
};
