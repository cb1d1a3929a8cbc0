import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../../../lambdas/core/events.ts';
import type { PageRequest } from '../../../../lambdas/core/ports/common.ts';
import type { Page } from '../../../../lambdas/core/schemas/common.ts';
import { type AuditLog, makeListAuditEvents } from '../../../../lambdas/core/use-cases/audit.ts';
import { makeWorld, principal, rejection, seedPipeline } from './fakes.ts';

const PAGE: PageRequest = { limit: 10 };

/** An audit log answering one page, recording what was asked of it. */
function auditLog() {
  const asked: Array<Parameters<AuditLog['list']>> = [];
  const page: Page<DomainEvent> = { items: [], nextCursor: null };
  const log: AuditLog = {
    async list(...args) {
      asked.push(args);
      return page;
    },
  };
  return { log, asked, page };
}

async function setup() {
  const world = makeWorld();
  const { pipeline } = await seedPipeline(world);
  const reads: string[] = [];
  const pipelines = {
    getPipeline: (id: string) => {
      reads.push(id);
      return world.pipelines.getPipeline(id);
    },
  };
  const audit = auditLog();
  const list = makeListAuditEvents({ audit: audit.log, pipelines });
  return { world, pipeline, reads, audit, list };
}

describe('makeListAuditEvents', () => {
  it("answers the caller's team's page, reading no pipeline without a pipeline filter", async () => {
    const { list, audit, reads } = await setup();
    const answer = await list(principal({ role: 'member' }), { type: 'synthesis_run.approved' }, PAGE);
    expect(answer).toBe(audit.page);
    expect(audit.asked).toEqual([['team-a', { type: 'synthesis_run.approved' }, PAGE]]);
    expect(reads).toEqual([]);
  });

  it('refuses a viewer with a 403 that says who may read it, reading nothing', async () => {
    const { list, audit, reads, pipeline } = await setup();
    const error = await rejection(list(principal({ role: 'viewer' }), { pipelineId: pipeline.id }, PAGE));
    expect(error.statusCode).toBe(403);
    expect(error.message).toBe('The audit log is for admins and members; the viewer role cannot read it.');
    expect(audit.asked).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('refuses a pipeline of another team with a 403 before any event is read', async () => {
    const { list, audit, reads, pipeline } = await setup();
    const error = await rejection(
      list(principal({ role: 'admin', teamId: 'team-b' }), { pipelineId: pipeline.id }, PAGE),
    );
    expect(error.statusCode).toBe(403);
    expect(reads).toEqual([pipeline.id]);
    expect(audit.asked).toEqual([]);
  });

  it("reads its own pipeline's events, and a deleted pipeline's from the caller's team only", async () => {
    const { list, audit, pipeline } = await setup();
    await list(principal({ role: 'admin' }), { pipelineId: pipeline.id }, PAGE);
    await list(principal({ teamId: 'team-b' }), { pipelineId: 'gone' }, PAGE);
    expect(audit.asked).toEqual([
      ['team-a', { pipelineId: pipeline.id }, PAGE],
      ['team-b', { pipelineId: 'gone' }, PAGE],
    ]);
  });
});
