/**
 * Names for the API's shapes that components pass around, all derived from the types generated
 * from the OpenAPI document (cli/api-types.ts): what the schema carries is never written twice.
 * Type-only imports, so nothing of them reaches the bundle.
 */
import type { Me, ResponseBody, RunDiff, SynthesisRun } from '../../cli/client.ts';

export type { Me, RunDiff };
export type Run = SynthesisRun;
export type RunStatus = Run['status'];
export type Role = Me['authentication']['role'];
export type Pipeline = ResponseBody<'get-pipeline'>;
export type Configuration = ResponseBody<'get-configuration'>;
export type Activation = ResponseBody<'list-activations'>['items'][number];

/** A finding cites signals and executions. */
export type Finding = NonNullable<Run['diagnosis']>['findings'][number];
export type StructuredWarning = Run['structuredWarnings'][number];

/** GET /synthesis-runs/{id}/evidence: the records the run's findings cite. */
export type Evidence = ResponseBody<'get-synthesis-run-evidence'>;
export type Signal = Evidence['signals'][number];
export type Execution = Evidence['executions'][number];

/** A pipeline's rollout, and the measured effect of an approval. */
export type Rollout = ResponseBody<'get-pipeline-rollout'>;
export type Effect = ResponseBody<'get-synthesis-run-effect'>;

/** A login, magic-link verification or refresh answer (the tokens travel as cookies). */
export type SessionSummary = ResponseBody<'log-in'>;

/** An API token as GET /api-tokens lists it (never its secret). */
export type ApiToken = ResponseBody<'list-api-tokens'>['items'][number];
/** The answer of POST /api-tokens: the token with its secret, shown once. */
export type CreatedApiToken = ResponseBody<'create-api-token', 201>;
