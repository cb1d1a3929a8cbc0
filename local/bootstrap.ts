/**
 * Creates a team, its first admin user and an API token, on a deployed stack or the local one:
 *
 *   npm run bootstrap -- --auth-table <AuthTableName output> --events-table <EventsTableName output> \
 *     --usage-plan <EvaluationUsagePlanId output> --team "Acme" --email ada@acme.example \
 *     [--name Ada] [--password-stdin] [--region eu-west-1]
 *
 * It writes straight to the auth table with the operator's own AWS credentials (the usual
 * AWS_PROFILE / AWS_REGION), which is why it is a command and not an API endpoint: nobody can
 * call it over HTTP. On AWS it also gives the new team its API key on the evaluation usage plan
 * (`--usage-plan`, the service stack's output) before its first member exists, so its evaluations
 * are counted per team from the start; if API Gateway refuses, nothing of the team has a member
 * and the command can be run again. Against the local stack (no API Gateway), add
 * `--endpoint <dynamodbEndpoint from .local/seed.json>` instead. The token is printed once; only
 * its SHA-256 is stored.
 *
 * `--password-stdin` reads the admin's password from standard input (first line), never from an
 * argument, so it stays out of shell history and the process list. Without it the admin signs in
 * with a magic link or uses the API token.
 */
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { makeBootstrapTeam } from '../lambdas/auth/bootstrap.ts';
import { makeEnsureTeamUsageKey, noUsageKeys } from '../lambdas/auth/usage-keys.ts';
import { ApiError } from '../lambdas/core/errors.ts';
import { makeTeamUsageKeyStore } from '../lambdas/store/auth/usage-keys.ts';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';
import { nanoidGenerator, systemClock } from '../lambdas/wiring/clock.ts';
import { makeAuthRepository } from '../lambdas/wiring/repositories.ts';
import { makeUsageKeyRegistry } from '../lambdas/wiring/usage-key-registry.ts';

const { values } = parseArgs({
  options: {
    'auth-table': { type: 'string' },
    'events-table': { type: 'string' },
    'usage-plan': { type: 'string' },
    team: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    endpoint: { type: 'string' },
    region: { type: 'string' },
  },
});

const authTable = values['auth-table'];
const eventsTable = values['events-table'];
const usagePlan = values['usage-plan'];
// On AWS the new team's evaluation key goes on the plan: without it the team would share the fallback key.
if (!authTable || !eventsTable || !values.team || !values.email || (!values.endpoint && !usagePlan)) {
  console.error(
    'usage: npm run bootstrap -- --auth-table <name> --events-table <name> (--usage-plan <EvaluationUsagePlanId output> | --endpoint <url>) --team <team name> --email <email> [--name <user name>] [--password-stdin] [--region <region>]',
  );
  process.exit(2);
}

async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trimEnd();
}

const password = values['password-stdin'] ? await readPasswordFromStdin() : undefined;

const client = new DynamoDBClient({
  ...(values.endpoint
    ? {
        endpoint: values.endpoint,
        region: values.region ?? 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : values.region
      ? { region: values.region }
      : {}),
});
const documentClient = createDocumentClient(client);
const bootstrap = makeBootstrapTeam({
  auth: makeAuthRepository(documentClient, authTable, eventsTable),
  clock: systemClock,
  ids: nanoidGenerator,
  // The local stack has no API Gateway: its gateway counts evaluations per team itself.
  usageKeys:
    values.endpoint || !usagePlan
      ? noUsageKeys
      : makeEnsureTeamUsageKey({
          store: makeTeamUsageKeyStore({ db: documentClient, tableName: authTable }),
          registry: makeUsageKeyRegistry(
            new APIGatewayClient(values.region ? { region: values.region } : {}),
            usagePlan,
          ),
        }),
});
try {
  const result = await bootstrap({
    teamName: values.team,
    email: values.email,
    userName: values.name ?? values.email.split('@')[0] ?? values.email,
    ...(password !== undefined ? { password } : {}),
  });
  console.log(
    JSON.stringify(
      { teamId: result.teamId, userId: result.userId, tokenId: result.tokenId, apiToken: result.apiToken },
      null,
      2,
    ),
  );
  console.error('Store the apiToken now: it is not shown again.');
} catch (error) {
  // A weak password or a taken email is the operator's to fix: say which, without a stack trace.
  if (error instanceof ApiError) {
    // An existing person joins another team by invitation, never by a second bootstrap.
    const hint = /already exists/.test(error.message)
      ? ' To add this person to a team, an admin of it invites them: pipeline-synthesis members invite <email> --role member (or Settings → Members in the app).'
      : '';
    console.error(`bootstrap refused: ${error.message}${hint}`);
    process.exit(1);
  }
  throw error;
}
