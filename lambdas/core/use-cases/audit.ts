/* The audit log: the team's events with their actors, newest first; admins and members read it. */
import { ForbiddenError } from '../errors.ts';
import type { DomainEvent, EventType } from '../events.ts';
import type { PageRequest } from '../ports/common.ts';
import type { PipelineReads } from '../ports/pipelines.ts';
import { assertSameTeam, type Principal } from '../principal.ts';
import type { Page } from '../schemas/common.ts';

export interface AuditLog {
  /** The team's events, newest first, optionally of one pipeline and one type. */
  list(
    teamId: string,
    filter: { pipelineId?: string | undefined; type?: EventType | undefined },
    page: PageRequest,
  ): Promise<Page<DomainEvent>>;
}

/**
 * The caller's team's audit log; viewers may not read it (it names who did what). A pipeline of
 * another team is a 403 before any event is read; a pipeline that no longer exists (deleted) is
 * no refusal: its events stay in its team's log, and the read is of the caller's team only.
 */
export function makeListAuditEvents({
  audit,
  pipelines,
}: {
  audit: AuditLog;
  pipelines: Pick<PipelineReads, 'getPipeline'>;
}) {
  return async (
    principal: Principal,
    filter: { pipelineId?: string | undefined; type?: EventType | undefined },
    page: PageRequest,
  ): Promise<Page<DomainEvent>> => {
    if (principal.role === 'viewer') {
      throw new ForbiddenError('The audit log is for admins and members; the viewer role cannot read it.');
    }
    if (filter.pipelineId !== undefined) {
      const pipeline = await pipelines.getPipeline(filter.pipelineId);
      if (pipeline) assertSameTeam(principal, pipeline.teamId);
    }
    return audit.list(principal.teamId, filter, page);
  };
}
