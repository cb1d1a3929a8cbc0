/**
 * What a function may reach (its access): the grants the CDK stack gives it (lib/service-function.ts)
 * and the variables both stacks set (function-environment.ts), declared by its operation module or
 * its row in lambdas/functions.ts.
 */
import type { WorkQueueName } from './queues.ts';

/** 'write': puts, updates and deletes without reading (the relay of carried events). */
export type TableAccess = 'read' | 'write' | 'readWrite';

export interface FunctionAccess {
  runs?: TableAccess;
  data?: TableAccess;
  auth?: TableAccess;
  /** The events table (outbox and audit log): 'readWrite' to write events with changes. */
  events?: TableAccess;
  /** The settings table (a pipeline's approval rules). */
  settings?: TableAccess;
  /** The queues it sends to, by name: sqs:SendMessage on each, and each one's URL in its variable. */
  send?: readonly WorkQueueName[];
  /**
   * Starts synthesis runs: the stack's default handler and the per-team hourly quota
   * (DEFAULT_SYNTHESIS_HANDLER, SYNTHESIS_RUNS_PER_TEAM_PER_HOUR).
   */
  startsRuns?: boolean;
  /**
   * Signs or verifies session tokens: read access to the session signing key secret and its ARN
   * as SESSION_SECRET_ARN (never the key itself in the environment).
   */
  sessionSecret?: boolean;
  /** Sends email through SES: ses:SendEmail on the sender identity, EMAIL_FROM and APP_URL. */
  sendsEmail?: boolean;
  /**
   * Calls the model API: read access to the Anthropic API key secret and its ARN as
   * ANTHROPIC_SECRET_ARN, and MODEL_PRICES when the stack sets prices.
   */
  callsModel?: boolean;
  /**
   * Sets `lastUsedAt` on API token items of the auth table: dynamodb:UpdateItem limited to
   * leading keys `APITOKEN#*` and the attributes pk, sk, lastUsedAt (the authorizer only).
   */
  recordsTokenUse?: boolean;
  /**
   * Names people in its answers (core/people.ts): dynamodb:GetItem and BatchGetItem on the auth
   * table limited to users and API tokens (leading keys `USER#*`, `APITOKENID#*`, `APITOKEN#*`)
   * and to the attributes of PEOPLE_ATTRIBUTES (emails and names, never a hash or password).
   */
  readsNames?: boolean;
  /**
   * Starts a team's serving version where none exists yet (OFREP's bulk evaluation): a narrow
   * dynamodb:PutItem on the data table, leading keys `TEAM#*#SERVING` and the attributes pk, sk,
   * version, changedAt only, not write access to the table.
   */
  startsServingVersions?: boolean;
  /**
   * Seals or opens webhook secrets and checks webhook URLs: read access to the webhook secret key
   * and its ARN as WEBHOOK_SECRET_KEY_ARN (locally WEBHOOK_SECRET_KEY and ALLOW_LOCAL_WEBHOOK_URLS).
   */
  webhookSecretKey?: boolean;
  /** Puts events on the stack's event bus: events:PutEvents on it and EVENT_BUS_NAME (AWS only). */
  putsEvents?: boolean;
  /** Links to the review app in what it writes (a monitor's events): APP_URL. */
  linksToApp?: boolean;
  /**
   * Names the caller's team's API key (`usageIdentifierKey`) on the evaluation routes, read from
   * the team's item: EVALUATION_ROUTES, the path templates of the operations declared
   * `rateLimit: 'evaluation'` (the authorizer only).
   */
  namesUsageKeys?: boolean;
  /**
   * Keeps teams' usage keys on their items: dynamodb:UpdateItem on the auth table limited to
   * leading keys `TEAM#*` and the attributes pk, sk, usageKeyId, usageKeyValue, usageKeyPlanId.
   */
  keepsUsageKeys?: boolean;
  /**
   * Makes and finds API keys and puts them on the evaluation plan (and on no other): the plan's id
   * as USAGE_PLAN_ID; apigateway:GET and POST on the account's API keys, POST on this plan's keys.
   */
  managesUsageKeys?: boolean;
}
