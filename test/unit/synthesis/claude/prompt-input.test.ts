import { describe, expect, it } from 'vitest';
import type { Execution } from '../../../../lambdas/core/schemas/records.ts';
import { buildSynthesisPrompt } from '../../../../lambdas/synthesis/claude/prompt.ts';
import { context } from './harness.ts';

/** An execution's recorded `input` reaches claude-v1's prompt only redacted and shortened. */
describe("an execution's input in the prompt", () => {
  // Built at run time: no secret-shaped string is committed.
  const token = ['sk', 'ant', 'api03', 'INPUTsecret0123456789abcdef'].join('-');
  const password = `pw${'x'.repeat(6)}42`;
  const execution: Execution = {
    id: 'run-with-input',
    pipelineId: 'p-1',
    configurationId: 'c-1',
    status: 'failed',
    durationMs: 1200,
    startedAt: '2025-03-01T12:00:00Z',
    error: 'retrieve failed',
    input: {
      question: `What is our refund policy? my key is ${token}`,
      password,
      context: 'y'.repeat(5_000),
    },
  };

  it('shows what the run was asked, with credentials and secret-named values redacted, bounded in size', () => {
    const { user, shownExecutions } = buildSynthesisPrompt(context({ executions: [execution] }));

    expect(shownExecutions.map((e) => e.id)).toEqual(['run-with-input']);
    expect(user).toContain('What is our refund policy?');
    expect(user).not.toContain(token);
    expect(user).not.toContain(password);
    expect(user).toContain('[redacted]');
    expect(user).not.toContain('y'.repeat(1_000));
  });
});
