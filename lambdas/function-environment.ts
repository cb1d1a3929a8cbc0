/**
 * The environment variables a function's access (its operation declaration or its row in
 * lambdas/functions.ts) gives it, in one place: the CDK stack (lib/service-function.ts) fills them
 * with the deployed resources, the local stack (local/functions.ts) with its local endpoints, so no
 * function sees more locally than on AWS.
 */
import { type FunctionAccess, type HandlerTrigger, queuesWithUrl, type TableAccess } from './functions.ts';
import { QUEUES, type WorkQueueName } from './queues.ts';
import { AUTH_TABLE, TABLE_DEFINITIONS, type TableDefinition } from './store/table-definitions.ts';
import { EVALUATION_FALLBACK_KEY_VARIABLE, EVALUATION_ROUTES_VARIABLE } from './wiring/config.ts';

/** Where each kind of access points; on AWS these are CDK tokens, locally plain values. */
export interface EnvironmentSources {
  readonly tableNames: Readonly<Record<TableDefinition['id'], string>>;
  /** Every work queue's URL, by its name (lambdas/queues.ts). */
  readonly queueUrls: Readonly<Record<WorkQueueName, string>>;
  /** The variables that lead to the session signing key: SESSION_SECRET_ARN on AWS, SESSION_SECRET locally. */
  readonly sessionSecret: Readonly<Record<string, string>>;
  /** EMAIL_FROM and APP_URL (locally also EMAIL_OUTBOX_DIR); needed only by `sendsEmail` functions. */
  readonly email?: Readonly<Record<string, string>>;
  /** APP_URL of the `linksToApp` functions: the review app's address (the API's /app unless the stack sets one). */
  readonly appUrl?: string;
  /** ANTHROPIC_SECRET_ARN (and MODEL_PRICES when set) on AWS; locally whatever ANTHROPIC_* the developer set. */
  readonly model?: Readonly<Record<string, string>>;
  /**
   * Which model a run's cost estimate prices, for the functions that start runs: MODEL_PROVIDER and
   * BEDROCK_MODEL_ID with Bedrock (and MODEL_PRICES when set); never a secret.
   */
  readonly modelChoice?: Readonly<Record<string, string>>;
  /** DEFAULT_SYNTHESIS_HANDLER for the functions that start runs, when the stack sets one. */
  readonly defaultSynthesisHandler?: string;
  /** SYNTHESIS_RUNS_PER_TEAM_PER_HOUR for the functions that start runs (lambdas/limits.ts). */
  readonly synthesisRunsPerTeamPerHour?: number;
  /** WEBHOOK_SECRET_KEY_ARN on AWS, WEBHOOK_SECRET_KEY locally; needed only by `webhookSecretKey` functions. */
  readonly webhookSecretKey?: Readonly<Record<string, string>>;
  /** The local stack alone: webhook URLs may be http://127.0.0.1 and http://localhost. */
  readonly allowLocalWebhookUrls?: boolean;
  /** The stack's event bus (AWS only: the local stack has no EventBridge). */
  readonly eventBusName?: string;
  /** RECORD_SHARDS of the functions reading or writing the data table (store/keys.ts); unset: the default. */
  readonly recordShards?: number;
  /** The evaluation operations' path templates (operations/declaration.ts evaluationPaths), for `namesUsageKeys`. */
  readonly evaluationRoutes?: readonly string[];
  /** The value of the stack's shared evaluation key (lib/api.ts), for `namesUsageKeys`. */
  readonly evaluationFallbackKey?: string;
  /** The evaluation usage plan's id (USAGE_PLAN_ID), for `managesUsageKeys`; AWS only. */
  readonly usagePlanId?: string;
}

const ACCESS_KEY: Record<TableDefinition['id'], 'runs' | 'data' | 'auth' | 'events' | 'settings'> = {
  Runs: 'runs',
  Data: 'data',
  Auth: 'auth',
  Events: 'events',
  Settings: 'settings',
};

/** What `access` grants on the table (the CDK stack's grant), or nothing. */
export function tableAccess(access: FunctionAccess, table: TableDefinition['id']): TableAccess | undefined {
  return access[ACCESS_KEY[table]];
}

/** The tables a function with `access` may write (the narrow token-use write aside). */
export function writtenTables(access: FunctionAccess): TableDefinition['id'][] {
  return TABLE_DEFINITIONS.map((definition) => definition.id).filter((table) => {
    const level = tableAccess(access, table);
    return level === 'write' || level === 'readWrite';
  });
}

/** `value`, or a clear error naming what the stack forgot to give. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`A function needs ${what}, but none was given.`);
  return value;
}

/**
 * The variables of one function with `access` (and, for a handler, its trigger); throws when a
 * source it needs is missing.
 */
export function accessEnvironment(
  access: FunctionAccess,
  sources: EnvironmentSources,
  trigger?: HandlerTrigger,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const definition of TABLE_DEFINITIONS) {
    if (tableAccess(access, definition.id))
      environment[definition.envVar] = sources.tableNames[definition.id];
  }
  // The authorizer's narrow token-use write, the narrow reads of people's names and the narrow
  // write of usage keys need the auth table's name even without `auth` access.
  if (access.recordsTokenUse || access.readsNames || access.keepsUsageKeys)
    environment[AUTH_TABLE.envVar] = sources.tableNames.Auth;
  const withUrl = queuesWithUrl(access, trigger);
  for (const queue of QUEUES) {
    if (queue.kind === 'work' && withUrl.includes(queue.name))
      environment[queue.urlVariable] = sources.queueUrls[queue.name];
  }
  if (access.startsRuns && sources.defaultSynthesisHandler !== undefined)
    environment.DEFAULT_SYNTHESIS_HANDLER = sources.defaultSynthesisHandler;
  if (access.startsRuns && sources.synthesisRunsPerTeamPerHour !== undefined)
    environment.SYNTHESIS_RUNS_PER_TEAM_PER_HOUR = String(sources.synthesisRunsPerTeamPerHour);
  if (access.sessionSecret) Object.assign(environment, sources.sessionSecret);
  if (access.sendsEmail) Object.assign(environment, required(sources.email, 'email settings'));
  if (access.linksToApp) environment.APP_URL = required(sources.appUrl, "the review app's URL");
  if (access.callsModel) Object.assign(environment, sources.model ?? {});
  if (access.startsRuns) Object.assign(environment, sources.modelChoice ?? {});
  if (access.webhookSecretKey) {
    Object.assign(environment, required(sources.webhookSecretKey, 'the webhook secret key'));
    if (sources.allowLocalWebhookUrls) environment.ALLOW_LOCAL_WEBHOOK_URLS = 'true';
  }
  if (access.putsEvents && sources.eventBusName) environment.EVENT_BUS_NAME = sources.eventBusName;
  if (access.namesUsageKeys) {
    environment[EVALUATION_ROUTES_VARIABLE] = JSON.stringify(
      required(sources.evaluationRoutes, 'the evaluation routes'),
    );
    environment[EVALUATION_FALLBACK_KEY_VARIABLE] = required(
      sources.evaluationFallbackKey,
      'the shared evaluation key',
    );
  }
  if (access.managesUsageKeys)
    environment.USAGE_PLAN_ID = required(sources.usagePlanId, 'the evaluation usage plan');
  if (tableAccess(access, 'Data') && sources.recordShards !== undefined)
    environment.RECORD_SHARDS = String(sources.recordShards);
  return environment;
}
