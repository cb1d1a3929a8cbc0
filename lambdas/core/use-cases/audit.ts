/* The audit log: the team's events with their actors, newest first; admins and members read it. */
import { ForbiddenError } from '../errors.ts';
import type { DomainEvent, EventType } from '../events.ts';
import type { PageRequest } from '../ports/common.ts';
import type { Principal } from '../principal.ts';
import type { Page } from '../schemas/common.ts';

export interface AuditLog {
  /** The team's events, newest first, optionally of one pipeline and one type. */
  list(
    teamId: string,
    filter: { pipelineId?: string | undefined; type?: EventType | undefined },
    page: PageRequest,
  ): Promise<Page<DomainEvent>>;
}

/** The caller's team's audit log; viewers may not read it (it names who did what). */
export function makeListAuditEvents({ audit }: { audit: AuditLog }) {
  return async (
    principal: Principal,
    filter: { pipelineId?: string | undefined; type?: EventType | undefined },
    page: PageRequest,
  ): Promise<Page<DomainEvent>> => {
    if (principal.role === 'viewer') {
      throw new ForbiddenError('The audit log is for admins and members; the viewer role cannot read it.');
    }
    return audit.list(principal.teamId, filter, page);
  };
}
