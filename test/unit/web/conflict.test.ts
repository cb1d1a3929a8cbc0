import { describe, expect, it } from 'vitest';
import { explainConflict } from '../../../web/src/conflict.ts';
import type { Run } from '../../../web/src/types.ts';

const run = (fields: Partial<Run>): Run =>
  ({
    id: 'run-1',
    status: 'generated',
    baseConfigurationId: 'config-1',
    approvedBy: null,
    approvedAt: null,
    rejectedBy: null,
    rejectedAt: null,
    rejectionReason: null,
    ...fields,
  }) as Run;

const context = { userId: 'user-me', activeConfigurationId: 'config-1', activeVersion: 1, baseVersion: 1 };

describe('explainConflict', () => {
  it('says who decided first and when, with "you" for the signed-in user', () => {
    const approved = explainConflict({
      ...context,
      action: 'reject',
      run: run({ status: 'approved', approvedBy: 'user-other', approvedAt: '2026-11-22T10:00:00.000Z' }),
    });
    const rejected = explainConflict({
      ...context,
      action: 'approve',
      run: run({
        status: 'rejected',
        rejectedBy: 'user-me',
        rejectedAt: '2026-11-22T10:00:00.000Z',
        rejectionReason: 'too risky',
      }),
    });

    expect(approved.title).toBe('This proposal was already approved');
    expect(approved.detail).toContain('another reviewer (user-other)');
    expect(rejected.title).toBe('This proposal was already rejected');
    expect(rejected.detail).toContain('rejected by you');
    expect(rejected.detail).toContain('“too risky”');
    expect(rejected.next).toContain('start a new synthesis');
  });

  it('names both versions when the active configuration moved past the proposal base', () => {
    const moved = explainConflict({
      ...context,
      action: 'approve',
      run: run({}),
      activeConfigurationId: 'config-3',
      activeVersion: 3,
      baseVersion: 1,
    });

    expect(moved.title).toBe('The pipeline changed since this proposal was made');
    expect(moved.detail).toContain('made from version 1, but version 3 is active now');
    expect(moved.next).toContain('Rebase onto the configuration active now');
    expect(moved.next).toContain('start a new synthesis');
  });

  it('says which status a run is in when it was never a proposal to decide', () => {
    const failed = explainConflict({ ...context, action: 'approve', run: run({ status: 'failed' }) });

    expect(failed.title).toBe('This run is failed');
    expect(failed.detail).toContain('Only a generated proposal can be approved');
  });
});
