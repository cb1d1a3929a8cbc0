/**
 * The environment variables a function's access (its operation declaration or lambdas/functions.ts) gives it, in one place: the
 * CDK stack (lib/service-function.ts) fills them with the deployed resources, the local stack
 * (local/functions.ts) with its local endpoints, so no function sees more locally than on AWS.
 */
import type { FunctionAccess, TableAccess } from './functions.ts';
import { AUTH_TABLE, TABLE_DEFINITIONS, type TableDefinition } from './store/table-definitions.ts';

/** Where each kind of access points; on AWS these are CDK tokens, locally plain values. */
export interface EnvironmentSources {
  readonly tableNames: Readonly<Record<TableDefinition['id'], string>>;
  readonly synthesisQueueUrl: string;
  /** The data-lifecycle queue (deletion jobs); required by the functions that send or consume them. */
  readonly lifecycleQueueUrl?: string;
  /** The guardrail queue (rollouts to judge); required by the functions that send or consume checks. */
  readonly guardrailQueueUrl?: string;
  /** The variables that lead to the session signing key: SESSION_SECRET_ARN on AWS, SESSION_SECRET locally. */
  readonly sessionSecret: Readonly<Record<string, string>>;
  /** EMAIL_FROM and APP_URL (locally also EMAIL_OUTBOX_DIR); needed only by `sendsEmail` functions. */
  readonly email?: Readonly<Record<string, string>>;
  /** ANTHROPIC_SECRET_ARN on AWS; locally whatever ANTHROPIC_* the developer set. */
  readonly model?: Readonly<Record<string, string>>;
  /** DEFAULT_SYNTHESIS_HANDLER for the functions that start runs, when the stack sets one. */
  readonly defaultSynthesisHandler?: string;
  /** SYNTHESIS_RUNS_PER_TEAM_PER_HOUR for the functions that start runs (lambdas/limits.ts). */
  readonly synthesisRunsPerTeamPerHour?: number;
  /** What the webhook functions need; absent where none is built. */
  readonly webhooks?: {
    readonly queueUrl: string;
    /** WEBHOOK_SECRET_KEY_ARN on AWS; WEBHOOK_SECRET_KEY locally. */
    readonly secretKey: Readonly<Record<string, string>>;
    /** The custom event bus (AWS only). */
    readonly eventBusName?: string;
    /** The local stack alone: webhook URLs may be http://127.0.0.1 and http://localhost. */
    readonly allowLocalUrls?: boolean;
  };
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

/** The variables of one function with `access`; throws when a source it needs is missing. */
export function accessEnvironment(
  access: FunctionAccess,
  sources: EnvironmentSources,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const definition of TABLE_DEFINITIONS) {
    if (tableAccess(access, definition.id))
      environment[definition.envVar] = sources.tableNames[definition.id];
  }
  // The authorizer's narrow token-use write needs the auth table's name even without `auth` access.
  if (access.recordsTokenUse) environment[AUTH_TABLE.envVar] = sources.tableNames.Auth;
  if (access.sendJobs || access.consumesJobs) environment.SYNTHESIS_QUEUE_URL = sources.synthesisQueueUrl;
  if (access.sendJobs && sources.defaultSynthesisHandler !== undefined)
    environment.DEFAULT_SYNTHESIS_HANDLER = sources.defaultSynthesisHandler;
  if (access.sendJobs && sources.synthesisRunsPerTeamPerHour !== undefined)
    environment.SYNTHESIS_RUNS_PER_TEAM_PER_HOUR = String(sources.synthesisRunsPerTeamPerHour);
  if (access.sendsLifecycleJobs || access.consumesLifecycleJobs) {
    if (sources.lifecycleQueueUrl === undefined)
      throw new Error('A function sends or consumes lifecycle jobs, but no lifecycle queue was given.');
    environment.LIFECYCLE_QUEUE_URL = sources.lifecycleQueueUrl;
  }
  if (access.sendsGuardrailChecks || access.consumesGuardrailChecks) {
    if (sources.guardrailQueueUrl === undefined)
      throw new Error('A function sends or consumes guardrail checks, but no guardrail queue was given.');
    environment.GUARDRAIL_QUEUE_URL = sources.guardrailQueueUrl;
  }
  if (access.sessionSecret) Object.assign(environment, sources.sessionSecret);
  if (access.sendsEmail) {
    if (sources.email === undefined)
      throw new Error('A function sends email, but no email settings were given.');
    Object.assign(environment, sources.email);
  }
  if (access.callsModel) Object.assign(environment, sources.model ?? {});
  if (access.webhookSecretKey || access.fansOutEvents || access.deliversWebhooks) {
    const webhooks = sources.webhooks;
    if (webhooks === undefined)
      throw new Error('A function handles webhooks, but no webhook settings were given.');
    if (access.webhookSecretKey) Object.assign(environment, webhooks.secretKey);
    if (access.fansOutEvents || access.deliversWebhooks) environment.WEBHOOK_QUEUE_URL = webhooks.queueUrl;
    if (access.fansOutEvents && webhooks.eventBusName) environment.EVENT_BUS_NAME = webhooks.eventBusName;
    if ((access.webhookSecretKey || access.deliversWebhooks) && webhooks.allowLocalUrls)
      environment.ALLOW_LOCAL_WEBHOOK_URLS = 'true';
  }
  return environment;
}
