import { describe, expect, it } from 'vitest';
import { newEvent } from '../../../lambdas/core/events.ts';
import { carriedEvent, carriedEventValue } from '../../../lambdas/store/events.ts';

/** Which stream records of a one-item change the relay writes into the events table. */
const rejected = newEvent(
  'synthesis_run.rejected',
  {
    teamId: 't1',
    pipelineId: 'p1',
    runId: 'r1',
    status: 'rejected',
    actor: { userId: 'u1', credential: 'session' },
  },
  { at: '2026-11-25T04:00:00.000Z', key: 'r1' },
);
const evaluated = newEvent(
  'synthesis_run.evaluated',
  {
    teamId: 't1',
    pipelineId: 'p1',
    runId: 'r1',
    actor: { userId: 'u1', credential: 'api_token', tokenId: 'k1' },
  },
  { at: '2026-11-25T04:01:00.000Z', key: 'r1_2' },
);
const image = (event?: typeof rejected) => ({
  id: { S: 'r1' },
  ...(event ? { outboxEvent: { S: carriedEventValue(event) } } : {}),
});

describe('carried events', () => {
  it('relays the event a write added, or replaced', () => {
    expect(carriedEvent({ NewImage: image(rejected), OldImage: image() })).toEqual(rejected);
    expect(carriedEvent({ NewImage: image(evaluated), OldImage: image(rejected) })).toEqual(evaluated);
    // A Put that creates the item (the settings table) has no old image.
    expect(carriedEvent({ NewImage: image(rejected) })).toEqual(rejected);
  });

  it('relays nothing for a later write that kept the event, a write without one, or a deletion', () => {
    expect(carriedEvent({ NewImage: image(rejected), OldImage: image(rejected) })).toBeNull();
    expect(carriedEvent({ NewImage: image(), OldImage: image() })).toBeNull();
    expect(carriedEvent({ OldImage: image(rejected) })).toBeNull();
  });

  it('refuses an attribute that is not an event, and an event over 20 KB', () => {
    expect(() => carriedEvent({ NewImage: { outboxEvent: { S: '{"type":"nope"}' } } })).toThrow();
    expect(() =>
      carriedEventValue({ ...rejected, data: { ...rejected.data, runId: 'x'.repeat(21_000) } }),
    ).toThrow(/under 20 KB/);
  });
});
