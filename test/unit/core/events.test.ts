/* The actor an event names, and a run's event: its id stable across retries, nothing undefined. */
import { describe, expect, it } from 'vitest';
import { actorOf, runEvent, SYSTEM_ACTOR } from '../../../lambdas/core/events.ts';

describe("an event's actor", () => {
  it("is the API token with its id for a token's request, the user for a session's", () => {
    expect(actorOf({ userId: 'u-1', method: 'api-token', tokenId: 't-1' })).toEqual({
      userId: 'u-1',
      credential: 'api_token',
      tokenId: 't-1',
    });
    const tokenless = actorOf({ userId: 'u-1', method: 'api-token' });
    expect(tokenless).toEqual({ userId: 'u-1', credential: 'api_token' });
    expect(tokenless).not.toHaveProperty('tokenId');
    expect(actorOf({ userId: 'u-2', method: 'session', tokenId: 't-1' })).toEqual({
      userId: 'u-2',
      credential: 'session',
    });
  });
});

describe("a run's event", () => {
  it('is keyed by the run, so a retried change writes the same event, and holds no undefined field', () => {
    const run = { id: 'run-1', teamId: 'team-1', pipelineId: 'pipe-1' };
    const event = runEvent(run, 'approved', '2026-01-01T00:00:00.000Z', SYSTEM_ACTOR, {
      configurationId: 'cfg-2',
    });
    expect(event).toEqual({
      id: 'evt_run-1_synthesis_run_approved',
      type: 'synthesis_run.approved',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: {
        teamId: 'team-1',
        pipelineId: 'pipe-1',
        runId: 'run-1',
        status: 'approved',
        configurationId: 'cfg-2',
        actor: SYSTEM_ACTOR,
      },
    });
    const failed = runEvent(run, 'failed', '2026-01-01T00:00:00.000Z', SYSTEM_ACTOR, {
      configurationId: undefined,
    });
    expect(Object.keys(failed.data)).toEqual(['teamId', 'pipelineId', 'runId', 'status', 'actor']);
    expect(failed.id).toBe('evt_run-1_synthesis_run_failed');
  });
});
