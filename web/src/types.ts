/**
 * The API's shapes as the application reads them: the records come from the zod schemas that
 * validate them on the server, the other answers from the types generated from the OpenAPI
 * document (cli/api-types.ts); type-only imports, so nothing of either reaches the bundle.
 */
import type { Me, ResponseBody, RunDiff } from '../../cli/client.ts';
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

/** A finding cites signals and executions. */
export type Finding = NonNullable<SynthesisRun['diagnosis']>['findings'][number];
export type Run = SynthesisRun;

export type { Me, RunDiff };
export type Role = Me['authentication']['role'];

/** A login, magic-link verification or refresh answer (the tokens travel as cookies). */
export type SessionSummary = ResponseBody<'log-in'>;

/** GET /synthesis-runs/{id}/evidence: the records the run's findings cite. */
export type Evidence = ResponseBody<'get-synthesis-run-evidence'>;

/** An API token as GET /api-tokens lists it (never its secret). */
export type ApiToken = ResponseBody<'list-api-tokens'>['items'][number];
