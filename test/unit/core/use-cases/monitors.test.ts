import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_MONITORS_PER_PIPELINE } from '../../../../lambdas/core/schemas/monitors.ts';
import {
  makeCreateMonitor,
  makeDeleteMonitor,
  makeGetMonitor,
  makeListMonitors,
  makeUpdateMonitor,
} from '../../../../lambdas/core/use-cases/monitors.ts';
import { makeWorld, principal, rejection, seedPipeline, type World } from './fakes.ts';
import { FakeMonitorRepository } from './monitor-fakes.ts';

let world: World;
let monitors: FakeMonitorRepository;
let pipelineId: string;

beforeEach(async () => {
  world = makeWorld('2026-12-03T10:00:00.000Z');
  monitors = new FakeMonitorRepository();
  pipelineId = (await seedPipeline(world)).pipeline.id;
});

const deps = () => ({ pipelines: world.pipelines, monitors, clock: world.clock, ids: world.ids });
const body = {
  name: 'Slow p95',
  metric: 'duration_p95',
  comparator: 'above',
  threshold: 2000,
  windowMinutes: 30,
} as const;

describe('monitors of a pipeline', () => {
  it('are created no_data with minExecutions 1, listed, read, changed and deleted', async () => {
    const created = await makeCreateMonitor(deps())(principal(), pipelineId, body);
    expect(created).toMatchObject({
      ...body,
      kind: null,
      minExecutions: 1,
      state: 'no_data',
      lastValue: null,
    });
    expect(created).not.toHaveProperty('teamId');
    expect(created).not.toHaveProperty('stateSeq');

    const changed = await makeUpdateMonitor(deps())(principal(), pipelineId, created.id, { threshold: 3000 });
    expect(changed.threshold).toBe(3000);
    expect(await makeGetMonitor(deps())(principal({ role: 'viewer' }), pipelineId, created.id)).toEqual(
      changed,
    );
    expect(
      (await makeListMonitors(deps())(principal({ role: 'viewer' }), pipelineId, { limit: 20 })).items,
    ).toEqual([changed]);

    await makeDeleteMonitor(deps())(principal(), pipelineId, created.id);
    expect((await rejection(makeGetMonitor(deps())(principal(), pipelineId, created.id))).statusCode).toBe(
      404,
    );
  });

  it('are read by viewers but written only by admins and members', async () => {
    const viewer = principal({ role: 'viewer' });
    expect((await rejection(makeCreateMonitor(deps())(viewer, pipelineId, body))).statusCode).toBe(403);
    const created = await makeCreateMonitor(deps())(principal({ role: 'admin' }), pipelineId, body);
    expect(
      (await rejection(makeUpdateMonitor(deps())(viewer, pipelineId, created.id, { name: 'x' }))).statusCode,
    ).toBe(403);
    expect((await rejection(makeDeleteMonitor(deps())(viewer, pipelineId, created.id))).statusCode).toBe(403);
  });

  it("are refused to another team's credential, on every use case", async () => {
    const created = await makeCreateMonitor(deps())(principal(), pipelineId, body);
    const other = principal({ teamId: 'team-b' });
    const refusals = await Promise.all([
      rejection(makeCreateMonitor(deps())(other, pipelineId, body)),
      rejection(makeListMonitors(deps())(other, pipelineId, { limit: 20 })),
      rejection(makeGetMonitor(deps())(other, pipelineId, created.id)),
      rejection(makeUpdateMonitor(deps())(other, pipelineId, created.id, { name: 'mine' })),
      rejection(makeDeleteMonitor(deps())(other, pipelineId, created.id)),
    ]);
    expect(refusals.map((error) => error.statusCode)).toEqual([403, 403, 403, 403, 403]);
    expect((await monitors.get(pipelineId, created.id))?.name).toBe('Slow p95');
  });

  it('need a kind with signal_mean and only there, and a failure rate threshold from 0 to 1', async () => {
    const create = makeCreateMonitor(deps());
    const noKind = await rejection(create(principal(), pipelineId, { ...body, metric: 'signal_mean' }));
    expect(noKind).toMatchObject({ statusCode: 400, message: expect.stringContaining('kind is required') });
    const strayKind = await rejection(create(principal(), pipelineId, { ...body, kind: 'helpfulness' }));
    expect(strayKind).toMatchObject({
      statusCode: 400,
      message: expect.stringContaining('only to metric signal_mean'),
    });
    const percent = await rejection(
      create(principal(), pipelineId, { ...body, metric: 'failure_rate', threshold: 5 }),
    );
    expect(percent).toMatchObject({ statusCode: 400, message: expect.stringContaining('ratio from 0 to 1') });

    // A change is checked with what it keeps: switching to signal_mean needs its kind too.
    const created = await create(principal(), pipelineId, body);
    const update = makeUpdateMonitor(deps());
    expect(
      (await rejection(update(principal(), pipelineId, created.id, { metric: 'signal_mean' }))).statusCode,
    ).toBe(400);
    const switched = await update(principal(), pipelineId, created.id, {
      metric: 'signal_mean',
      kind: 'helpfulness',
      threshold: 0.5,
    });
    expect(switched).toMatchObject({ metric: 'signal_mean', kind: 'helpfulness' });
  });

  it(`stop at ${MAX_MONITORS_PER_PIPELINE} a pipeline, with a 400 naming the cap`, async () => {
    const create = makeCreateMonitor(deps());
    for (let index = 0; index < MAX_MONITORS_PER_PIPELINE; index++)
      await create(principal(), pipelineId, body);
    const over = await rejection(create(principal(), pipelineId, body));
    expect(over).toMatchObject({
      statusCode: 400,
      message: expect.stringContaining(`at most ${MAX_MONITORS_PER_PIPELINE}`),
    });
  });
});
