/**
 * The API's shapes as the application reads them: the records come from the zod schemas that
 * validate them on the server (type-only imports: nothing of zod reaches the bundle); answers
 * without a schema of their own are written out here.
 */
import type {
  Activation,
  Configuration,
  Execution,
  Page,
  Pipeline,
  RunStatus,
  Signal,
  StructuredWarning,
  SynthesisRun,
} from '../../lambdas/core/schemas.ts';

export type { Activation, Configuration, Execution, Page, Pipeline, RunStatus, Signal, StructuredWarning };

/** A finding cites signals and, from issue 14 on, executions. */
export type Finding = NonNullable<SynthesisRun['diagnosis']>['findings'][number] & {
  executionIds?: string[];
};
export type Run = SynthesisRun & {
  diagnosis: { summary: string; findings: Finding[] } | null;
};

export type Role = 'admin' | 'member' | 'viewer';

/** GET /me */
export interface Me {
  user: { id: string; email: string; name?: string; createdAt: string };
  teams: Array<{ id: string; name: string; role: Role }>;
  authentication: { method: 'session' | 'api-token'; teamId: string; role: Role };
}

/** The `session` of a login, magic-link verification or refresh answer (cookie delivery). */
export interface SessionSummary {
  session: { teamId: string; role: Role; accessTokenExpiresAt: string; refreshTokenExpiresAt: string };
}

/** GET /synthesis-runs/{id}/diff */
export interface RunDiff {
  runId: string;
  base: { id: string; version: number };
  proposed: { id: string; version: number };
  slots: Array<{
    slotId: string;
    name: string;
    kind: string;
    status: 'changed' | 'unchanged' | 'added' | 'removed';
    settings: Array<{ key: string; before: unknown; after: unknown }>;
    changeIds: string[];
  }>;
}

/** GET /synthesis-runs/{id}/evidence: the records the run's findings cite. */
export interface Evidence {
  signals: Signal[];
  executions: Execution[];
}

/** An API token as GET /api-tokens lists it (never its secret). */
export interface ApiToken {
  id: string;
  name: string;
  teamId: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}
