/**
 * What the local stack puts where the CDK stack puts AWS resources: the local tables' names, the
 * local queues' URLs, fresh secrets, the outbox directory for email, and what Lambda's role and
 * region give every function (credentials, endpoints).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { EnvironmentSources } from '../lambdas/function-environment.ts';
import type { AbuseLimits } from '../lambdas/limits.ts';
import type { WorkQueueName } from '../lambdas/queues.ts';
import { recordShardsOf } from '../lambdas/store/keys.ts';
import { SERVICE_NAME } from '../lib/names.ts';
import type { TableNames } from './dynamodb.ts';

/** What every local function gets besides its access: what Lambda's role and region would give. */
export interface LocalPlatform {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** POWERTOOLS log level (LOG_LEVEL); metrics lines are printed only at DEBUG. */
  logLevel: string;
}

/** What Lambda's role and region give every function, with the local endpoints in place of AWS's. */
export function platformEnvironment(platform: LocalPlatform): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    LOG_LEVEL: platform.logLevel,
    // Lambda hands every function its role's credentials in these variables.
    AWS_ACCESS_KEY_ID: platform.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: platform.credentials.secretAccessKey,
    // The local endpoints stand in for the region's.
    AWS_ENDPOINT_URL_DYNAMODB: platform.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: platform.sqsEndpoint,
    ...(platform.logLevel.toUpperCase() === 'DEBUG' ? {} : { POWERTOOLS_METRICS_DISABLED: 'true' }),
  };
}

/** The developer's model settings (ANTHROPIC_*, MODEL_PROVIDER, BEDROCK_*), for the functions that call the model. */
function modelSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        /^(ANTHROPIC_|BEDROCK_|MODEL_PROVIDER$|MODEL_PRICES$)/.test(entry[0]) && entry[1] !== undefined,
    ),
  );
}

/** Which model a run's estimate prices, for the functions that start runs (as lib/service-function.ts gives them). */
function modelChoice(): Record<string, string> {
  const settings = modelSettings();
  return Object.fromEntries(
    ['MODEL_PROVIDER', 'BEDROCK_MODEL_ID', 'MODEL_PRICES', 'ANTHROPIC_MODEL'].flatMap((name) =>
      settings[name] === undefined ? [] : [[name, settings[name]]],
    ),
  );
}

export interface LocalSources {
  tableNames: TableNames;
  queueUrls: Readonly<Record<WorkQueueName, string>>;
  /** Where sign-in emails are written instead of sent. */
  stateDir: string;
  /** The gateway's URL: magic links open the review application there. */
  gatewayUrl: string;
  limits: AbuseLimits;
  /** The evaluation operations' path templates (operations/declaration.ts evaluationPaths). */
  evaluationRoutes: readonly string[];
}

/** The local resources each kind of access points to (lambdas/function-environment.ts). */
export function localEnvironmentSources(local: LocalSources): EnvironmentSources {
  return {
    tableNames: local.tableNames,
    queueUrls: local.queueUrls,
    // On AWS the signing key comes from Secrets Manager; locally a fresh one per start.
    sessionSecret: { SESSION_SECRET: randomBytes(32).toString('base64url') },
    email: {
      EMAIL_FROM: 'Pipeline Synthesis <no-reply@localhost>',
      // Magic links open the review application on this gateway.
      APP_URL: process.env.APP_URL ?? `${local.gatewayUrl}/app`,
      EMAIL_OUTBOX_DIR: path.join(local.stateDir, 'outbox'),
    },
    // Monitors' events link to the review application on this gateway.
    appUrl: process.env.APP_URL ?? `${local.gatewayUrl}/app`,
    model: modelSettings(),
    modelChoice: modelChoice(),
    ...(process.env.DEFAULT_SYNTHESIS_HANDLER
      ? { defaultSynthesisHandler: process.env.DEFAULT_SYNTHESIS_HANDLER }
      : {}),
    synthesisRunsPerTeamPerHour: local.limits.synthesisRunsPerTeamPerHour,
    // The authorizer names a team's key on these routes; locally teams have none (no API Gateway),
    // so it names this shared one, which the local gateway ignores: it counts per team itself.
    evaluationRoutes: local.evaluationRoutes,
    evaluationFallbackKey: 'local-shared-evaluations-key',
    // On AWS the key comes from Secrets Manager; locally a fresh one per start.
    webhookSecretKey: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url') },
    allowLocalWebhookUrls: true,
    // The data's shard count (store/keys.ts): keep it between starts on a kept DynamoDB.
    ...(process.env.RECORD_SHARDS ? { recordShards: recordShardsOf(process.env.RECORD_SHARDS) } : {}),
    // No EventBridge locally: no EVENT_BUS_NAME, the deliverer skips the put.
  };
}
